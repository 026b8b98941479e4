import { existsSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { TemplateReadError } from './errors.js';
import { isRecord } from './intrinsics.js';
import { readBoundedText } from './json.js';
import { projectRoot, resolveInside } from './paths.js';
import type { StreamFunctionSettings } from './stream-function.js';
import {
  checkStreamSource,
  functionSettings,
  mappingSettings,
  parameterDefaults,
  type TemplateSite,
} from './template-mapping.js';
import { MAX_YAML_LENGTH, parseServerlessYaml } from './yaml.js';

/**
 * A SAM template (template.yaml) read for the local runtime: its AWS::Serverless::Function
 * DynamoDB and Kinesis events as stream functions (handler code from CodeUri, settings from the event), and
 * its resources as plain CloudFormation for the template planner (AWS::Serverless::SimpleTable
 * becomes the on-demand table SAM deploys). Everything wrong is a TemplateReadError, before
 * anything starts.
 */
export interface TemplateApp {
  /** The template (or, for a CDK app, the cdk.out folder). */
  file: string;
  /** The app's name: the template's folder for SAM, the stacks' names for a CDK app. */
  name: string;
  /** The CloudFormation resources the local servers get (tables, buckets, queues; others listed). */
  resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  /** The templates' Conditions (for Fn::If in an environment). */
  conditions: Record<string, unknown>;
  /** `Ref` of a parameter: its Default. */
  parameters: Record<string, string>;
  /** One entry per stream mapping. */
  functions: StreamFunctionSettings[];
  /** By function key: the template and the function's logical id, for errors found later. */
  sites: Record<string, TemplateSite>;
}

type Resource = { Type?: unknown; Properties?: unknown };

export function readSamTemplate(file: string): TemplateApp {
  const path = resolve(file);
  let template: unknown;
  try {
    template = parseServerlessYaml(readBoundedText(path, MAX_YAML_LENGTH * 4), path);
  } catch (error) {
    throw new TemplateReadError(path, 'template', '', `cannot be read (${(error as Error).message})`);
  }
  const all = isRecord(template) && isRecord(template.Resources) ? template.Resources : undefined;
  if (all === undefined) throw new TemplateReadError(path, 'template', 'Resources', 'is missing');
  const globals =
    isRecord(template) && isRecord(template.Globals) && isRecord(template.Globals.Function)
      ? template.Globals.Function
      : {};
  const resources: TemplateApp['resources'] = {};
  const functions: (StreamFunctionSettings & { streamProperty: string })[] = [];
  for (const [id, raw] of Object.entries(all) as [string, Resource][]) {
    const properties = isRecord(raw?.Properties) ? raw.Properties : {};
    if (raw?.Type === 'AWS::Serverless::SimpleTable') resources[id] = simpleTable(path, id, properties);
    else if (raw?.Type === 'AWS::Serverless::Function')
      functions.push(...streamFunctions(path, id, withGlobals(globals, properties)));
    else if (typeof raw?.Type === 'string') resources[id] = { Type: raw.Type, Properties: properties };
  }
  if (functions.length === 0)
    throw new TemplateReadError(
      path,
      'template',
      'Resources',
      'has no AWS::Serverless::Function with an Events entry of Type DynamoDB or Kinesis: nothing to run',
    );
  const parameters = parameterDefaults(isRecord(template) ? template.Parameters : undefined);
  const sites: TemplateApp['sites'] = {};
  for (const { streamProperty, ...fn } of functions) {
    const resource = fn.key.split('.')[0] as string;
    checkStreamSource({ file: path, resource }, streamProperty, fn.stream, resources, parameters);
    sites[fn.key] = { file: path, resource };
  }
  return {
    file: path,
    // The stack name SAM would be given is not in the template; the folder's name stands in (as
    // characters a table or queue name takes).
    name: basename(dirname(path)).replace(/[^A-Za-z0-9_.-]/g, '-'),
    resources,
    conditions: isRecord(template) && isRecord(template.Conditions) ? template.Conditions : {},
    parameters,
    functions: functions.map(({ streamProperty: _, ...fn }) => fn),
    sites,
  };
}

/** SAM's Globals.Function under a function's own properties (its Environment.Variables merged). */
function withGlobals(
  globals: Record<string, unknown>,
  own: Record<string, unknown>,
): Record<string, unknown> {
  const variables = (p: Record<string, unknown>) =>
    isRecord(p.Environment) && isRecord(p.Environment.Variables) ? p.Environment.Variables : {};
  return {
    ...globals,
    ...own,
    Environment: { Variables: { ...variables(globals), ...variables(own) } },
  };
}

function streamFunctions(
  file: string,
  id: string,
  properties: Record<string, unknown>,
): (StreamFunctionSettings & { streamProperty: string })[] {
  const events = isRecord(properties.Events) ? Object.entries(properties.Events) : [];
  const streams = events.filter(
    ([, event]) => isRecord(event) && (event.Type === 'DynamoDB' || event.Type === 'Kinesis'),
  );
  if (streams.length === 0) return [];
  const site = { file, resource: id };
  const dir = codeDir(file, id, properties.CodeUri);
  const { Events: _events, CodeUri: _code, Runtime: _runtime, ...rest } = properties;
  return streams.map(([name, event]) => {
    const props = isRecord((event as Record<string, unknown>).Properties)
      ? ((event as Record<string, unknown>).Properties as Record<string, unknown>)
      : {};
    const source = (event as Record<string, unknown>).Type === 'Kinesis' ? 'kinesis' : 'dynamodb';
    const stream = mappingSettings(site, props, 'Stream', `Events.${name}.Properties.`, source);
    const settings = functionSettings(site, rest, { dir }, stream);
    const streamProperty = `Events.${name}.Properties.Stream`;
    return streams.length === 1
      ? { ...settings, streamProperty }
      : { ...settings, key: `${id}.${name}`, streamProperty };
  });
}

/**
 * CodeUri: a folder (or a file's folder) beside the template, inside its project (projectRoot);
 * an S3 location has no local code.
 */
function codeDir(file: string, id: string, codeUri: unknown): string {
  if (typeof codeUri !== 'string')
    throw new TemplateReadError(
      file,
      id,
      'CodeUri',
      codeUri === undefined
        ? 'is missing: the function has no local code'
        : 'points at S3: the function has no local code (give a folder beside the template)',
    );
  if (codeUri.startsWith('s3://'))
    throw new TemplateReadError(file, id, 'CodeUri', 'points at S3: the function has no local code');
  const dir = resolveInside(
    projectRoot(dirname(file)),
    codeUri,
    (detail) => new TemplateReadError(file, id, 'CodeUri', detail),
    dirname(file),
  );
  if (!existsSync(dir)) throw new TemplateReadError(file, id, 'CodeUri', `${dir} does not exist`);
  return statSync(dir).isDirectory() ? dir : dirname(dir);
}

/** AWS::Serverless::SimpleTable as SAM deploys it: one string (or given) key, on demand, no stream. */
function simpleTable(
  file: string,
  id: string,
  properties: Record<string, unknown>,
): TemplateApp['resources'][string] {
  const key = isRecord(properties.PrimaryKey) ? properties.PrimaryKey : { Name: 'id', Type: 'String' };
  const types: Record<string, string> = { String: 'S', Number: 'N', Binary: 'B' };
  const type = types[String(key.Type)];
  if (typeof key.Name !== 'string' || type === undefined)
    throw new TemplateReadError(file, id, 'PrimaryKey', 'must be { Name, Type: String | Number | Binary }');
  return {
    Type: 'AWS::DynamoDB::Table',
    Properties: {
      ...(typeof properties.TableName === 'string' ? { TableName: properties.TableName } : {}),
      AttributeDefinitions: [{ AttributeName: key.Name, AttributeType: type }],
      KeySchema: [{ AttributeName: key.Name, KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    },
  };
}
