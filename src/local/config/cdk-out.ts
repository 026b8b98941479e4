import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TemplateReadError } from './errors.js';
import { isRecord } from './intrinsics.js';
import type { TemplateApp } from './sam-template.js';
import type { StreamFunctionSettings } from './stream-function.js';
import { functionSettings, mappingSettings } from './template-mapping.js';

/**
 * A CDK app's synthesized output (cdk.out: manifest.json, one template per stack, one asset
 * folder per code asset) read for the local runtime: every AWS::Lambda::EventSourceMapping with
 * its function, whose code is the asset folder its Code.S3Key names (`<hash>.zip` →
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
  const resources: TemplateApp['resources'] = {};
  const functions: StreamFunctionSettings[] = [];
  for (const [stack, artifact] of stacks) {
    const properties = (artifact as Record<string, unknown>).properties;
    const templateFile = isRecord(properties) ? properties.templateFile : undefined;
    if (typeof templateFile !== 'string')
      throw new TemplateReadError(manifestFile, stack, 'properties.templateFile', 'is missing');
    const file = join(root, templateFile);
    const template = readJson(file, stack);
    const all = isRecord(template.Resources) ? template.Resources : {};
    for (const [id, raw] of Object.entries(all)) {
      if (!isRecord(raw) || typeof raw.Type !== 'string') continue;
      const props = isRecord(raw.Properties) ? raw.Properties : {};
      if (raw.Type === 'AWS::Lambda::EventSourceMapping') {
        const site = { file, resource: id };
        const stream = mappingSettings(site, props, 'EventSourceArn');
        const fnId = referencedFunction(site, props.FunctionName, all);
        const fn = all[fnId] as Record<string, unknown>;
        const fnProps = isRecord(fn.Properties) ? fn.Properties : {};
        const code = assetDir(root, { file, resource: fnId }, fnProps.Code, fn.Metadata);
        functions.push({
          ...functionSettings({ file, resource: fnId }, fnProps, { dir: code }, stream),
          key: fnId,
        });
      } else if (raw.Type !== 'AWS::Lambda::Function') {
        resources[id] = { Type: raw.Type, Properties: props };
      }
    }
  }
  if (functions.length === 0)
    throw new TemplateReadError(
      manifestFile,
      'templates',
      'Resources',
      'hold no AWS::Lambda::EventSourceMapping: nothing to run',
    );
  return { file: root, resources, functions };
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
