import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TemplateReadError } from './errors.js';
import { isRecord } from './intrinsics.js';
import type { TemplateApp } from './sam-template.js';
import type { StreamFunctionSettings } from './stream-function.js';
import {
  checkStreamSource,
  functionSettings,
  mappingSettings,
  mappingSource,
  parameterDefaults,
} from './template-mapping.js';

/**
 * A CDK app's synthesized output (cdk.out: manifest.json, one template per stack, one asset
 * folder per code asset) read for the local runtime: every AWS::Lambda::EventSourceMapping (on a
 * table's DynamoDB stream or a Kinesis data stream) with its function, whose code is the asset folder its Code.S3Key names (`<hash>.zip` →
 * `asset.<hash>/`). Everything wrong is a TemplateReadError, before anything starts.
 */
export function readCdkOut(dir: string): TemplateApp {
  const root = resolve(dir);
  const manifestFile = join(root, 'manifest.json');
  const manifest = readJson(manifestFile, 'manifest');
  const artifacts = isRecord(manifest.artifacts) ? Object.entries(manifest.artifacts) : [];
  const stacks = artifacts.filter(([, a]) => isRecord(a) && a.type === 'aws:cloudformation:stack');
  if (stacks.length === 0)
    throw new TemplateReadError(manifestFile, 'manifest', 'artifacts', 'holds no aws:cloudformation:stack');
  const templates = stacks.map(([stack, artifact]) => {
    const properties = (artifact as Record<string, unknown>).properties;
    const templateFile = isRecord(properties) ? properties.templateFile : undefined;
    if (typeof templateFile !== 'string')
      throw new TemplateReadError(manifestFile, stack, 'properties.templateFile', 'is missing');
    const file = join(root, templateFile);
    return { stack, file, template: readJson(file, stack) };
  });
  // Cross-stack references: CDK writes an Output with an Export in one stack and Fn::ImportValue
  // in the other; every stack is on the same local servers, so an import is the export's value.
  const exports = new Map<string, unknown>();
  for (const { template } of templates)
    for (const output of Object.values(isRecord(template.Outputs) ? template.Outputs : {}))
      if (isRecord(output) && isRecord(output.Export) && typeof output.Export.Name === 'string')
        exports.set(output.Export.Name, output.Value);
  const all: Record<string, Record<string, unknown>> = {};
  const fileOf = new Map<string, string>();
  const resources: TemplateApp['resources'] = {};
  const conditions: TemplateApp['conditions'] = {};
  const parameters: TemplateApp['parameters'] = {};
  for (const { stack, file, template } of templates) {
    Object.assign(conditions, isRecord(template.Conditions) ? template.Conditions : {});
    Object.assign(parameters, parameterDefaults(template.Parameters));
    for (const [own, raw] of Object.entries(isRecord(template.Resources) ? template.Resources : {})) {
      if (!isRecord(raw) || typeof raw.Type !== 'string') continue;
      let id = own;
      if (fileOf.has(id)) {
        // Every stack has its CDKMetadata; only what the runtime refers to must be unique.
        if (RUNTIME_TYPES.has(raw.Type) || RUNTIME_TYPES.has(String(all[id]?.Type)))
          throw new TemplateReadError(
            file,
            id,
            '',
            `is also declared in ${fileOf.get(id)}: logical ids must differ between stacks`,
          );
        id = `${stack}/${own}`;
      }
      fileOf.set(id, file);
      const resolved = withImports(raw, exports) as Record<string, unknown>;
      all[id] = resolved;
      if (raw.Type !== 'AWS::Lambda::Function' && raw.Type !== 'AWS::Lambda::EventSourceMapping')
        resources[id] = {
          Type: raw.Type,
          Properties: isRecord(resolved.Properties) ? resolved.Properties : {},
        };
    }
  }
  const mappings = Object.entries(all).filter(([, raw]) => raw.Type === 'AWS::Lambda::EventSourceMapping');
  const mappingsOf = new Map<string, number>();
  const read = mappings.map(([id, raw]) => {
    const site = { file: fileOf.get(id) as string, resource: id };
    const props = isRecord(raw.Properties) ? raw.Properties : {};
    const source = mappingSource(props.EventSourceArn, resources, parameters);
    const stream = mappingSettings(site, props, 'EventSourceArn', '', source);
    checkStreamSource(site, 'EventSourceArn', stream, resources, parameters);
    const fnId = referencedFunction(site, props.FunctionName, all);
    mappingsOf.set(fnId, (mappingsOf.get(fnId) ?? 0) + 1);
    return { id, fnId, stream };
  });
  const functions: StreamFunctionSettings[] = [];
  const sites: TemplateApp['sites'] = {};
  for (const { id, fnId, stream } of read) {
    const fn = all[fnId] as Record<string, unknown>;
    const fnSite = { file: fileOf.get(fnId) as string, resource: fnId };
    const fnProps = isRecord(fn.Properties) ? fn.Properties : {};
    const code = assetDir(root, fnSite, fnProps.Code, fn.Metadata);
    // One function read by several mappings runs once per mapping, each named by its mapping.
    const key = (mappingsOf.get(fnId) ?? 0) > 1 ? `${fnId}.${id}` : fnId;
    functions.push({ ...functionSettings(fnSite, fnProps, { dir: code }, stream), key });
    sites[key] = fnSite;
  }
  if (functions.length === 0)
    throw new TemplateReadError(
      manifestFile,
      'templates',
      'Resources',
      'hold no AWS::Lambda::EventSourceMapping: nothing to run',
    );
  return {
    file: root,
    name: templates.map((t) => t.stack).join('-'),
    resources,
    conditions,
    parameters,
    functions,
    sites,
  };
}

// What a mapping, its function or its environment may refer to by logical id across stacks.
const RUNTIME_TYPES = new Set([
  'AWS::DynamoDB::Table',
  'AWS::DynamoDB::GlobalTable',
  'AWS::S3::Bucket',
  'AWS::SQS::Queue',
  'AWS::Kinesis::Stream',
  'AWS::Kinesis::StreamConsumer',
  'AWS::Lambda::Function',
  'AWS::Lambda::EventSourceMapping',
]);

/** Fn::ImportValue of an export some stack of the app declares, replaced by the export's value. */
function withImports(node: unknown, exports: ReadonlyMap<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((item) => withImports(item, exports));
  if (!isRecord(node)) return node;
  const name = node['Fn::ImportValue'];
  if (Object.keys(node).length === 1 && typeof name === 'string' && exports.has(name))
    return withImports(exports.get(name), exports);
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, withImports(value, exports)]));
}

function readJson(file: string, resource: string): Record<string, unknown> {
  if (!existsSync(file)) throw new TemplateReadError(file, resource, '', 'does not exist (run `cdk synth`)');
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (isRecord(value)) return value;
  } catch {
    // reported below, with the file named
  }
  throw new TemplateReadError(file, resource, '', 'is not a JSON object');
}

/** The logical id of the function a mapping's FunctionName refers to (Ref or Fn::GetAtt [id, Arn]). */
function referencedFunction(
  site: { file: string; resource: string },
  value: unknown,
  all: Record<string, unknown>,
): string {
  const ref = isRecord(value)
    ? typeof value.Ref === 'string'
      ? value.Ref
      : Array.isArray(value['Fn::GetAtt'])
        ? value['Fn::GetAtt'][0]
        : undefined
    : undefined;
  const target = typeof ref === 'string' ? all[ref] : undefined;
  if (!isRecord(target) || target.Type !== 'AWS::Lambda::Function')
    throw new TemplateReadError(
      site.file,
      site.resource,
      'FunctionName',
      `must be a Ref or Fn::GetAtt to an AWS::Lambda::Function in the same template, got ${JSON.stringify(value)}`,
    );
  return ref as string;
}

/** The asset folder of a function's code: Metadata aws:asset:path, else `asset.<hash>` from Code.S3Key. */
function assetDir(
  root: string,
  site: { file: string; resource: string },
  code: unknown,
  metadata: unknown,
): string {
  const fromMetadata = isRecord(metadata) ? metadata['aws:asset:path'] : undefined;
  const key = isRecord(code) ? code.S3Key : undefined;
  const folder =
    typeof fromMetadata === 'string'
      ? fromMetadata
      : typeof key === 'string' && key.endsWith('.zip')
        ? `asset.${key.slice(0, -'.zip'.length)}`
        : undefined;
  if (folder === undefined)
    throw new TemplateReadError(
      site.file,
      site.resource,
      'Code',
      isRecord(code) && 'ZipFile' in code
        ? 'is inline (ZipFile): the function has no local code'
        : 'names no asset (Code.S3Key <hash>.zip): the function has no local code',
    );
  const dir = join(root, folder);
  if (!existsSync(dir))
    throw new TemplateReadError(
      site.file,
      site.resource,
      'Code.S3Key',
      `asset ${folder} is missing from ${root}`,
    );
  return dir;
}
