import { existsSync, realpathSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { TemplateReadError } from './errors.js';
import { isRecord } from './intrinsics.js';
import { readJsonFile } from './json.js';
import { MAX_NESTING_DEPTH } from './nesting.js';
import { resolveInside } from './paths.js';
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
 * TemplateReadError, before anything starts. Every path the assembly names (templateFile, a
 * stage's directory, an asset) must stay inside it; cycles (a stack nesting itself, imports or
 * nested outputs naming each other) and expansions past MAX_SPLICED_NODES are refused by name.
 */
export function readCdkOut(dir: string, stage?: string): TemplateApp {
  const top = resolve(dir);
  const { root, manifestFile, manifest, stacks } = stackAssembly(top, top, stage, []);
  const stackTemplates = stacks.map(([stack, artifact]) => {
    const properties = (artifact as Record<string, unknown>).properties;
    const templateFile = isRecord(properties) ? properties.templateFile : undefined;
    const fail = (detail: string) =>
      new TemplateReadError(manifestFile, stack, 'properties.templateFile', detail);
    if (typeof templateFile !== 'string') throw fail('is missing');
    const file = resolveInside(top, templateFile, fail, root);
    return { stack, file, template: readJson(file, stack) };
  });
  // One budget for what parameters passed to nested stacks, imports and nested outputs add.
  const budget = { left: MAX_SPLICED_NODES };
  const nesting: Nesting = { top, root, manifest, left: MAX_STACK_TEMPLATES, budget };
  const templates = stackTemplates.flatMap((t) => [t, ...nestedStacks(nesting, t, [realFile(t.file)])]);
  const outputs = nestedOutputs(templates);
  // Cross-stack references: CDK writes an Output with an Export in one stack and Fn::ImportValue
  // in the other; every stack is on the same local servers, so an import is the export's value.
  const exports = new Map<string, unknown>();
  for (const { template } of templates)
    for (const output of Object.values(isRecord(template.Outputs) ? template.Outputs : {}))
      if (isRecord(output) && isRecord(output.Export) && typeof output.Export.Name === 'string')
        exports.set(output.Export.Name, output.Value);
  const splicing: Splicing = { exports, outputs, budget };
  // Logical ids are the template's text: kept in objects without a prototype (`__proto__` is an id).
  const all: Record<string, Record<string, unknown>> = Object.create(null);
  const fileOf = new Map<string, string>();
  const resources: TemplateApp['resources'] = Object.create(null);
  const conditions: TemplateApp['conditions'] = Object.create(null);
  const parameters: TemplateApp['parameters'] = Object.create(null);
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
      const resolved = splice(
        raw,
        splicing,
        (detail) => new TemplateReadError(file, id, '', detail),
      ) as Record<string, unknown>;
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
 * How many nodes the imports', nested outputs' and passed parameters' values may add to the app's
 * resources, all together. A real app imports names and ARNs (a few nodes each); stacks whose exports each import
 * the one before twice double with every stack, 2^30 nodes from a 4 KB cdk.out.
 */
export const MAX_SPLICED_NODES = 100_000;

/** What splice substitutes, and the nodes it may still add (shared by every resource of the app). */
interface Splicing {
  readonly exports: ReadonlyMap<string, unknown>;
  readonly outputs: ReadonlyMap<string, Record<string, unknown>>;
  readonly budget: { left: number };
}

/**
 * `node` with each Fn::ImportValue of an export some stack of the app declares replaced by the
 * export's value, and each `Fn::GetAtt [NestedStack, Outputs.<name>]` by that output's value in the
 * nested template, within the spliced values too. The chain of splices being expanded finds a
 * cycle (an export importing itself through others); the budget and the depth bound the rest.
 */
function splice(node: unknown, splicing: Splicing, fail: (detail: string) => Error): unknown {
  const walk = (value: unknown, chain: readonly string[], depth: number): unknown => {
    if (depth > MAX_NESTING_DEPTH * 2)
      throw fail(`nests deeper than ${MAX_NESTING_DEPTH * 2} levels once spliced: ${chain.join(' → ')}`);
    if (chain.length > 0 && --splicing.budget.left < 0) throw fail(expandsTooFar(chain.join(' → ')));
    if (Array.isArray(value)) return value.map((item) => walk(item, chain, depth + 1));
    if (!isRecord(value)) return value;
    const spliced = splicedValue(value, splicing);
    if (spliced !== undefined) {
      const at = chain.indexOf(spliced.label);
      if (at !== -1) throw fail(`form a cycle: ${[...chain.slice(at), spliced.label].join(' → ')}`);
      return walk(spliced.value, [...chain, spliced.label], depth + 1);
    }
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, walk(item, chain, depth + 1)]),
    );
  };
  return walk(node, [], 0);
}

/** The value an import or a nested stack's output stands for, with its label for a chain; undefined for any other object. */
function splicedValue(
  object: Record<string, unknown>,
  { exports, outputs }: Splicing,
): { label: string; value: unknown } | undefined {
  if (Object.keys(object).length !== 1) return undefined;
  const name = object['Fn::ImportValue'];
  if (typeof name === 'string' && exports.has(name))
    return { label: `Fn::ImportValue ${name}`, value: exports.get(name) };
  const att = object['Fn::GetAtt'];
  if (!Array.isArray(att) || typeof att[1] !== 'string' || !att[1].startsWith('Outputs.')) return undefined;
  const values = outputs.get(String(att[0]));
  const output = att[1].slice('Outputs.'.length);
  return values !== undefined && Object.hasOwn(values, output)
    ? { label: `${String(att[0])}.${att[1]}`, value: values[output] }
    : undefined;
}

function expandsTooFar(chain: string): string {
  return `imports, nested outputs and passed parameters expand past ${MAX_SPLICED_NODES} nodes in this cdk.out: ${chain}`;
}

function readJson(file: string, resource: string): Record<string, unknown> {
  if (!existsSync(file)) throw new TemplateReadError(file, resource, '', 'does not exist (run `cdk synth`)');
  let value: unknown;
  try {
    value = readJsonFile(file);
  } catch (error) {
    throw new TemplateReadError(file, resource, '', `cannot be read: ${(error as Error).message}`);
  }
  if (isRecord(value)) return value;
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
  const property = typeof fromMetadata === 'string' ? "Metadata['aws:asset:path']" : 'Code.S3Key';
  const inside = (from: string) =>
    resolveInside(
      top,
      folder,
      (detail) => new TemplateReadError(site.file, site.resource, property, detail),
      from,
    );
  const candidates = typeof fromMetadata === 'string' ? [inside(root)] : [inside(root), inside(top)];
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
 * it holds. A stage's directory stays inside `top` (the cdk.out given); `visited` (the assemblies
 * on the way, real paths) refuses one that leads back to itself.
 */
function stackAssembly(
  top: string,
  dir: string,
  stage: string | undefined,
  visited: readonly string[],
): { root: string; manifestFile: string; manifest: Manifest; stacks: Artifact[] } {
  const manifestFile = join(dir, 'manifest.json');
  const real = realFile(dir);
  if (visited.includes(real))
    throw new TemplateReadError(
      manifestFile,
      'manifest',
      'artifacts',
      `nests its own assembly: ${[...visited, real].map((d) => relative(top, d) || '.').join(' → ')}`,
    );
  const manifest = readJson(manifestFile, 'manifest');
  const stacks = artifactsOf(manifest, 'aws:cloudformation:stack');
  const stages = artifactsOf(manifest, 'cdk:cloud-assembly').flatMap(([id, artifact]) => {
    const directory = nestedAssemblyDir(artifact);
    return directory === undefined ? [] : [{ id, name: nestedAssemblyName(artifact, id), directory }];
  });
  const enter = (s: { id: string; directory: string }, next: string | undefined) =>
    stackAssembly(
      top,
      resolveInside(
        top,
        s.directory,
        (detail) =>
          new TemplateReadError(
            manifestFile,
            'manifest',
            `artifacts.${s.id}.properties.directoryName`,
            detail,
          ),
        dir,
      ),
      next,
      [...visited, real],
    );
  // A stage in a stage is named by its path (`Prod/Eu`): its parent's assembly holds its own.
  const named =
    stages.find((s) => s.name === stage) ?? stages.find((s) => stage?.startsWith(`${s.name}/`) === true);
  if (named !== undefined) return enter(named, named.name === stage ? undefined : stage);
  if (stacks.length > 0) return { root: dir, manifestFile, manifest, stacks };
  if (stages.length === 0)
    throw new TemplateReadError(manifestFile, 'manifest', 'artifacts', 'holds no aws:cloudformation:stack');
  if (stages.length === 1) return enter(stages[0] as (typeof stages)[number], stage);
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
 * The most stack templates (stacks and nested stacks, each nested stack counted as often as it is
 * declared) one cdk.out may hold: CloudFormation allows 2,000 stacks per account, but a stack
 * declaring ten nested stacks of one template that declares ten more grows tenfold per level.
 */
export const MAX_STACK_TEMPLATES = 500;

/** Where nested stacks' templates are found, and how many more may be read. */
interface Nesting {
  readonly top: string;
  readonly root: string;
  readonly manifest: Manifest;
  left: number;
  readonly budget: { left: number };
}

/** A file's real path (links followed), for telling one file from another; itself if missing. */
function realFile(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return resolve(file);
  }
}

/**
 * The nested stacks (AWS::CloudFormation::Stack) a stack declares, and theirs, each template
 * with its Parameters replaced by what the parent passes (CDK passes every reference to a parent's
 * resource that way), so that all resources resolve in one namespace. `ancestors` (the templates
 * above, real paths) refuses a stack nesting itself; the count is bounded by MAX_STACK_TEMPLATES.
 */
function nestedStacks(
  nesting: Nesting,
  parent: StackTemplate,
  ancestors: readonly string[],
): StackTemplate[] {
  const resources = isRecord(parent.template.Resources) ? parent.template.Resources : {};
  return Object.entries(resources).flatMap(([id, raw]) => {
    if (!isRecord(raw) || raw.Type !== 'AWS::CloudFormation::Stack') return [];
    const props = isRecord(raw.Properties) ? raw.Properties : {};
    const file = nestedTemplateFile(nesting, parent, id, raw.Metadata, props.TemplateURL);
    const real = realFile(file);
    if (ancestors.includes(real))
      throw new TemplateReadError(
        parent.file,
        id,
        'TemplateURL',
        `nests a stack inside itself: ${[...ancestors, real].map((f) => relative(nesting.top, f)).join(' → ')}`,
      );
    if (--nesting.left < 0)
      throw new TemplateReadError(
        parent.file,
        id,
        'TemplateURL',
        `makes more than ${MAX_STACK_TEMPLATES} nested stack templates in this cdk.out`,
      );
    const template = readJson(file, id);
    const passed = isRecord(props.Parameters) ? props.Parameters : {};
    const withParameters = (node: unknown) =>
      withPassed(
        node,
        passed,
        nesting.budget,
        (detail) => new TemplateReadError(file, id, 'Parameters', detail),
      );
    const nested: StackTemplate = {
      stack: `${parent.stack}/${id}`,
      file,
      template: {
        ...template,
        // Substituted below: the parent's values are all a nested stack's parameters can have.
        Parameters: undefined,
        Resources: withParameters(template.Resources),
        Outputs: withParameters(template.Outputs),
      },
      declaredAs: id,
    };
    return [nested, ...nestedStacks(nesting, nested, [...ancestors, real])];
  });
}

/**
 * A nested stack's template file: Metadata aws:asset:path, else the file the stack's asset
 * manifest names for the `<hash>.json` of its TemplateURL.
 */
function nestedTemplateFile(
  { top, root, manifest }: Nesting,
  parent: StackTemplate,
  id: string,
  metadata: unknown,
  templateUrl: unknown,
): string {
  const inside = (path: string, file: string, resource: string, property: string) =>
    resolveInside(top, path, (detail) => new TemplateReadError(file, resource, property, detail), root);
  const fromMetadata = isRecord(metadata) ? metadata['aws:asset:path'] : undefined;
  if (typeof fromMetadata === 'string')
    return inside(fromMetadata, parent.file, id, "Metadata['aws:asset:path']");
  const hash = /([0-9a-f]{64})\.json/.exec(JSON.stringify(templateUrl ?? ''))?.[1];
  const manifests = hash === undefined ? [] : artifactsOf(manifest, 'cdk:asset-manifest');
  for (const [artifactId, artifact] of manifests) {
    const properties = isRecord(artifact) ? artifact.properties : undefined;
    if (!isRecord(properties) || typeof properties.file !== 'string') continue;
    const assetsFile = inside(properties.file, join(root, 'manifest.json'), artifactId, 'properties.file');
    const assets = readJson(assetsFile, 'assets');
    const entry =
      isRecord(assets.files) && Object.hasOwn(assets.files, hash as string)
        ? assets.files[hash as string]
        : undefined;
    const source = isRecord(entry) ? entry.source : undefined;
    if (isRecord(source) && typeof source.path === 'string')
      return inside(source.path, assetsFile, hash as string, 'source.path');
  }
  throw new TemplateReadError(
    parent.file,
    id,
    'TemplateURL',
    'names no template in this cdk.out (no aws:asset:path, no asset manifest entry for it)',
  );
}

/**
 * `{ Ref: <parameter> }` replaced by the value the parent passes for it (an expression in the
 * parent, not substituted again), the copied nodes counted against `budget`.
 */
function withPassed(
  node: unknown,
  passed: Record<string, unknown>,
  budget: { left: number },
  fail: (detail: string) => Error,
): unknown {
  const walk = (value: unknown, parameter: string | undefined, depth: number): unknown => {
    if (depth > MAX_NESTING_DEPTH * 2)
      throw fail(`nests deeper than ${MAX_NESTING_DEPTH * 2} levels once parameters are passed`);
    if (parameter !== undefined && --budget.left < 0) throw fail(expandsTooFar(`Ref ${parameter}`));
    if (Array.isArray(value)) return value.map((item) => walk(item, parameter, depth + 1));
    if (!isRecord(value)) return value;
    const ref = value.Ref;
    if (
      parameter === undefined &&
      Object.keys(value).length === 1 &&
      typeof ref === 'string' &&
      Object.hasOwn(passed, ref)
    )
      return walk(passed[ref], ref, depth + 1);
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, walk(item, parameter, depth + 1)]),
    );
  };
  return walk(node, undefined, 0);
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
