import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
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
 * table's DynamoDB stream or a Kinesis data stream) with its function, whose code is the asset
 * folder its Code.S3Key names (`<hash>.zip` → `asset.<hash>/`), in the stacks and their nested
 * stacks. An app whose stacks are in CDK Stages (nested cloud assemblies, `assembly-<Stage>/`)
 * is read from the one stage it has, or the one `stage` names. Everything wrong is a
 * TemplateReadError, before anything starts.
 */
export function readCdkOut(dir: string, stage?: string): TemplateApp {
  const top = resolve(dir);
  const { root, manifestFile, manifest, stacks } = stackAssembly(top, stage);
  const stackTemplates = stacks.map(([stack, artifact]) => {
    const properties = (artifact as Record<string, unknown>).properties;
    const templateFile = isRecord(properties) ? properties.templateFile : undefined;
    if (typeof templateFile !== 'string')
      throw new TemplateReadError(manifestFile, stack, 'properties.templateFile', 'is missing');
    const file = join(root, templateFile);
    return { stack, file, template: readJson(file, stack) };
  });
  const templates = stackTemplates.flatMap((t) => [t, ...nestedStacks(root, manifest, t)]);
  const outputs = nestedOutputs(templates);
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
      const resolved = withImports(withNestedOutputs(raw, outputs), exports) as Record<string, unknown>;
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
    const code = assetDir(root, top, fnSite, fnProps.Code, fn.Metadata);
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
    name: stackTemplates.map((t) => t.stack).join('-'),
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

/**
 * `node` with each object `replace` answers for replaced by its answer (undefined: kept, its
 * members walked). The walk behind the cross-stack and nested-stack substitutions.
 */
function substitute(node: unknown, replace: (object: Record<string, unknown>) => unknown): unknown {
  if (Array.isArray(node)) return node.map((item) => substitute(item, replace));
  if (!isRecord(node)) return node;
  const replaced = replace(node);
  if (replaced !== undefined) return replaced;
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, substitute(value, replace)]));
}

/** Fn::ImportValue of an export some stack of the app declares, replaced by the export's value. */
function withImports(node: unknown, exports: ReadonlyMap<string, unknown>): unknown {
  return substitute(node, (object) => {
    const name = object['Fn::ImportValue'];
    return Object.keys(object).length === 1 && typeof name === 'string' && exports.has(name)
      ? withImports(exports.get(name), exports)
      : undefined;
  });
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

/**
 * The asset folder of a function's code: Metadata aws:asset:path (relative to the stack's
 * assembly: `../asset.<hash>` in a stage), else `asset.<hash>` from Code.S3Key, which CDK stages
 * in the app's top assembly (`top`) whichever stage the stack is in.
 */
function assetDir(
  root: string,
  top: string,
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
  const candidates =
    typeof fromMetadata === 'string' ? [join(root, folder)] : [join(root, folder), join(top, folder)];
  const dir = candidates.find((candidate) => existsSync(candidate));
  if (dir === undefined)
    throw new TemplateReadError(
      site.file,
      site.resource,
      'Code.S3Key',
      `asset ${folder} is missing from ${root}`,
    );
  return dir;
}

type Manifest = Record<string, unknown>;
type Artifact = [string, unknown];

function artifactsOf(manifest: Manifest, type: string): Artifact[] {
  const artifacts = isRecord(manifest.artifacts) ? Object.entries(manifest.artifacts) : [];
  return artifacts.filter(([, a]) => isRecord(a) && a.type === type);
}

function nestedAssemblyDir(artifact: unknown): string | undefined {
  const properties = isRecord(artifact) ? artifact.properties : undefined;
  return isRecord(properties) && typeof properties.directoryName === 'string'
    ? properties.directoryName
    : undefined;
}

function nestedAssemblyName(artifact: unknown, id: string): string {
  const properties = isRecord(artifact) ? artifact.properties : undefined;
  return isRecord(properties) && typeof properties.displayName === 'string' ? properties.displayName : id;
}

/**
 * The assembly that holds the app's stacks: the CDK Stage (nested cloud assembly) `stage` names by
 * its display name (`Prod`, `Prod/Eu`), else `dir` itself when it holds stacks, else the one stage
 * it holds.
 */
function stackAssembly(
  dir: string,
  stage: string | undefined,
): { root: string; manifestFile: string; manifest: Manifest; stacks: Artifact[] } {
  const manifestFile = join(dir, 'manifest.json');
  const manifest = readJson(manifestFile, 'manifest');
  const stacks = artifactsOf(manifest, 'aws:cloudformation:stack');
  const stages = artifactsOf(manifest, 'cdk:cloud-assembly').flatMap(([id, artifact]) => {
    const directory = nestedAssemblyDir(artifact);
    return directory === undefined ? [] : [{ name: nestedAssemblyName(artifact, id), directory }];
  });
  // A stage in a stage is named by its path (`Prod/Eu`): its parent's assembly holds its own.
  const named =
    stages.find((s) => s.name === stage) ?? stages.find((s) => stage?.startsWith(`${s.name}/`) === true);
  if (named !== undefined)
    return stackAssembly(join(dir, named.directory), named.name === stage ? undefined : stage);
  if (stacks.length > 0) return { root: dir, manifestFile, manifest, stacks };
  if (stages.length === 0)
    throw new TemplateReadError(manifestFile, 'manifest', 'artifacts', 'holds no aws:cloudformation:stack');
  if (stages.length === 1)
    return stackAssembly(join(dir, (stages[0] as { directory: string }).directory), stage);
  throw new TemplateReadError(
    manifestFile,
    'manifest',
    'artifacts',
    `holds the CDK stages ${stages.map((s) => s.name).join(', ')} and no stack of its own: name one with --stage (${stages
      .map((s) => `--stage ${s.name}`)
      .join(' or ')}), or give its assembly as --cdk-out (${stages
      .map((s) => relative(process.cwd(), join(dir, s.directory)) || '.')
      .join(' or ')})`,
  );
}

interface StackTemplate {
  /** The stack's artifact id; a nested stack's is its parent's and its logical id, joined by `/`. */
  stack: string;
  file: string;
  template: Record<string, unknown>;
  /** Of a nested stack: the logical id of the AWS::CloudFormation::Stack that declares it. */
  declaredAs?: string;
}

/**
 * The nested stacks (AWS::CloudFormation::Stack) a stack declares, and theirs, each template
 * with its Parameters replaced by what the parent passes (CDK passes every reference to a parent's
 * resource that way), so that all resources resolve in one namespace.
 */
function nestedStacks(root: string, manifest: Manifest, parent: StackTemplate): StackTemplate[] {
  const resources = isRecord(parent.template.Resources) ? parent.template.Resources : {};
  return Object.entries(resources).flatMap(([id, raw]) => {
    if (!isRecord(raw) || raw.Type !== 'AWS::CloudFormation::Stack') return [];
    const props = isRecord(raw.Properties) ? raw.Properties : {};
    const file = nestedTemplateFile(root, manifest, parent, id, raw.Metadata, props.TemplateURL);
    const template = readJson(file, id);
    const passed = isRecord(props.Parameters) ? props.Parameters : {};
    const nested: StackTemplate = {
      stack: `${parent.stack}/${id}`,
      file,
      template: {
        ...template,
        // Substituted below: the parent's values are all a nested stack's parameters can have.
        Parameters: undefined,
        Resources: withParameters(template.Resources, passed),
        Outputs: withParameters(template.Outputs, passed),
      },
      declaredAs: id,
    };
    return [nested, ...nestedStacks(root, manifest, nested)];
  });
}

/**
 * A nested stack's template file: Metadata aws:asset:path, else the file the stack's asset
 * manifest names for the `<hash>.json` of its TemplateURL.
 */
function nestedTemplateFile(
  root: string,
  manifest: Manifest,
  parent: StackTemplate,
  id: string,
  metadata: unknown,
  templateUrl: unknown,
): string {
  const fromMetadata = isRecord(metadata) ? metadata['aws:asset:path'] : undefined;
  if (typeof fromMetadata === 'string') return join(root, fromMetadata);
  const hash = /([0-9a-f]{64})\.json/.exec(JSON.stringify(templateUrl ?? ''))?.[1];
  const manifests = hash === undefined ? [] : artifactsOf(manifest, 'cdk:asset-manifest');
  for (const [, artifact] of manifests) {
    const properties = isRecord(artifact) ? artifact.properties : undefined;
    if (!isRecord(properties) || typeof properties.file !== 'string') continue;
    const assets = readJson(join(root, properties.file), 'assets');
    const entry = isRecord(assets.files) ? assets.files[hash as string] : undefined;
    const source = isRecord(entry) ? entry.source : undefined;
    if (isRecord(source) && typeof source.path === 'string') return join(root, source.path);
  }
  throw new TemplateReadError(
    parent.file,
    id,
    'TemplateURL',
    'names no template in this cdk.out (no aws:asset:path, no asset manifest entry for it)',
  );
}

/** `{ Ref: <parameter> }` replaced by the value the parent passes for it (an expression in the parent). */
function withParameters(node: unknown, passed: Record<string, unknown>): unknown {
  return substitute(node, (object) => {
    const ref = object.Ref;
    return Object.keys(object).length === 1 && typeof ref === 'string' && Object.hasOwn(passed, ref)
      ? passed[ref]
      : undefined;
  });
}

/** Each nested stack's outputs, by the logical id that declares it: `Fn::GetAtt [id, Outputs.<name>]`. */
function nestedOutputs(templates: readonly StackTemplate[]): Map<string, Record<string, unknown>> {
  const outputs = new Map<string, Record<string, unknown>>();
  for (const t of templates) {
    if (t.declaredAs === undefined) continue;
    const values: Record<string, unknown> = {};
    for (const [name, output] of Object.entries(isRecord(t.template.Outputs) ? t.template.Outputs : {}))
      if (isRecord(output)) values[name] = output.Value;
    outputs.set(t.declaredAs, values);
  }
  return outputs;
}

/** `Fn::GetAtt [NestedStack, Outputs.<name>]` replaced by that output's value in the nested template. */
function withNestedOutputs(node: unknown, outputs: ReadonlyMap<string, Record<string, unknown>>): unknown {
  return substitute(node, (object) => {
    const att = object['Fn::GetAtt'];
    if (Object.keys(object).length !== 1 || !Array.isArray(att) || typeof att[1] !== 'string')
      return undefined;
    const values = outputs.get(String(att[0]));
    const name = att[1].startsWith('Outputs.') ? att[1].slice('Outputs.'.length) : undefined;
    return values !== undefined && name !== undefined && Object.hasOwn(values, name)
      ? withNestedOutputs(values[name], outputs)
      : undefined;
  });
}
