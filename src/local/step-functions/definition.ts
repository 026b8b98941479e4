import { readFileSync } from 'node:fs';
import { MapRunError, UnsupportedDefinitionError } from './errors.js';

/**
 * The part of Amazon States Language the local Map runner emulates: one Distributed Map state
 * (JSONPath) reading a JSONL or JSON file from S3, with ItemSelector, ItemBatcher, MaxConcurrency,
 * ToleratedFailurePercentage / Count and ResultWriter, whose children run one Task (a function).
 * Anything else is an UnsupportedDefinitionError naming its state and field, never ignored.
 */
export interface MapPlan {
  readonly state: string;
  readonly reader: {
    readonly inputType: 'JSONL' | 'JSON';
    readonly bucket: Template;
    readonly key: Template;
    readonly maxItems: number | undefined;
  };
  readonly itemSelector: Template | undefined;
  readonly batcher:
    | { readonly maxItems: number; readonly maxBytes: number; readonly batchInput: Template | undefined }
    | undefined;
  /** 0: no limit (Step Functions then runs up to 10,000 children at once). */
  readonly maxConcurrency: number;
  /** Undefined when the definition does not set it (with neither set, any failure fails the run). */
  readonly toleratedPercentage: number | undefined;
  readonly toleratedCount: number | undefined;
  readonly executionType: 'STANDARD' | 'EXPRESS';
  readonly task: {
    readonly state: string;
    readonly resource: string;
    readonly timeoutSeconds: number | undefined;
  };
  readonly writer: { readonly bucket: string; readonly prefix: string } | undefined;
}

/** A Parameters-style template: `"key.$": "$.path"` fields read paths, the others are literals. */
export type Template = unknown;

const MAP_FIELDS = new Set([
  'Type',
  'Comment',
  'Label',
  'ItemReader',
  'ItemSelector',
  'ItemBatcher',
  'MaxConcurrency',
  'ToleratedFailurePercentage',
  'ToleratedFailureCount',
  'ItemProcessor',
  'ResultWriter',
  'End',
]);
const TASK_FIELDS = new Set(['Type', 'Comment', 'Resource', 'TimeoutSeconds', 'Retry', 'End']);
// Errors a local function call cannot raise (they come from the Lambda service), so a Retry on
// them changes nothing locally; a Retry on anything else would, and is not emulated.
const LAMBDA_SERVICE_ERRORS = new Set([
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
]);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The definition with each `${Name}` replaced from `substitutions` (CloudFormation's DefinitionSubstitutions). */
export function substitute(node: unknown, substitutions: Readonly<Record<string, string>>): unknown {
  if (typeof node === 'string')
    return node.replace(/\$\{(\w+)\}/g, (_, name: string) => {
      const value = substitutions[name];
      if (value === undefined)
        throw new UnsupportedDefinitionError('(definition)', `\${${name}}`, 'no substitution given for it');
      return value;
    });
  if (Array.isArray(node)) return node.map((n) => substitute(n, substitutions));
  if (isObject(node))
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, substitute(v, substitutions)]));
  return node;
}

/** A definition file (.json) or an already parsed definition. */
export function readDefinition(definition: string | URL | object): unknown {
  if (typeof definition === 'string' || definition instanceof URL)
    return JSON.parse(readFileSync(definition, 'utf8'));
  return definition;
}

function only(state: string, where: string, value: Json, allowed: ReadonlySet<string>): void {
  for (const key of Object.keys(value))
    if (!allowed.has(key))
      throw new UnsupportedDefinitionError(state, `${where}${key}`, 'not emulated locally');
}

function integer(
  state: string,
  field: string,
  value: unknown,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max)
    throw new UnsupportedDefinitionError(
      state,
      field,
      `must be an integer from 0 to ${max}, got ${JSON.stringify(value)}`,
    );
  return value;
}

function checkTemplate(state: string, field: string, template: unknown): Template {
  if (isObject(template))
    for (const [key, value] of Object.entries(template)) {
      if (key.endsWith('.$')) {
        if (typeof value !== 'string' || !PATH.test(value))
          throw new UnsupportedDefinitionError(
            state,
            `${field}.${key}`,
            `only plain paths ($.a.b, $$.Map.Item.Value.a, $$.Map.Item.Index) are emulated, got ${JSON.stringify(value)}`,
          );
      } else checkTemplate(state, `${field}.${key}`, value);
    }
  return template;
}

const PATH = /^\$\$?(\.[A-Za-z_][\w-]*)*$/;

/** Plans the definition's Distributed Map; throws UnsupportedDefinitionError for anything else. */
export function planDistributedMap(definition: unknown): MapPlan {
  if (!isObject(definition) || !isObject(definition.States) || typeof definition.StartAt !== 'string')
    throw new UnsupportedDefinitionError('(definition)', 'States', 'not a state machine definition');
  if (definition.QueryLanguage !== undefined && definition.QueryLanguage !== 'JSONPath')
    throw new UnsupportedDefinitionError('(definition)', 'QueryLanguage', 'only JSONPath is emulated');
  const name = definition.StartAt;
  const states = Object.keys(definition.States);
  if (states.length !== 1)
    throw new UnsupportedDefinitionError(
      name,
      'States',
      `only a definition of one Map state is emulated, found ${states.length} states`,
    );
  const map = definition.States[name];
  if (!isObject(map) || map.Type !== 'Map')
    throw new UnsupportedDefinitionError(name, 'Type', 'only a Map state is emulated');
  only(name, '', map, MAP_FIELDS);
  if (map.End !== true) throw new UnsupportedDefinitionError(name, 'End', 'the Map must end the execution');

  const processor = map.ItemProcessor;
  if (
    !isObject(processor) ||
    !isObject(processor.ProcessorConfig) ||
    processor.ProcessorConfig.Mode !== 'DISTRIBUTED'
  )
    throw new UnsupportedDefinitionError(
      name,
      'ItemProcessor.ProcessorConfig.Mode',
      'only DISTRIBUTED is emulated',
    );
  const executionType = processor.ProcessorConfig.ExecutionType;
  if (executionType !== 'STANDARD' && executionType !== 'EXPRESS')
    throw new UnsupportedDefinitionError(
      name,
      'ItemProcessor.ProcessorConfig.ExecutionType',
      'must be STANDARD or EXPRESS',
    );
  const children = isObject(processor.States) ? Object.entries(processor.States) : [];
  const [taskName = '', task] = children[0] ?? [];
  if (children.length !== 1 || taskName !== processor.StartAt || !isObject(task) || task.Type !== 'Task')
    throw new UnsupportedDefinitionError(
      name,
      'ItemProcessor.States',
      'only a child workflow of one Task state is emulated',
    );
  only(taskName, '', task, TASK_FIELDS);
  if (task.End !== true)
    throw new UnsupportedDefinitionError(taskName, 'End', 'the Task must end the child workflow');
  if (typeof task.Resource !== 'string' || !task.Resource.startsWith('arn:aws:lambda:'))
    throw new UnsupportedDefinitionError(
      taskName,
      'Resource',
      'only a Lambda function ARN is emulated (not lambda:invoke or other integrations)',
    );
  for (const [i, retrier] of (Array.isArray(task.Retry) ? task.Retry : []).entries()) {
    const errors = isObject(retrier) && Array.isArray(retrier.ErrorEquals) ? retrier.ErrorEquals : [];
    if (errors.length === 0 || !errors.every((e) => LAMBDA_SERVICE_ERRORS.has(String(e))))
      throw new UnsupportedDefinitionError(
        taskName,
        `Retry[${i}].ErrorEquals`,
        'only Lambda service errors (which no local call raises) may be retried',
      );
  }

  const reader = map.ItemReader;
  if (!isObject(reader) || reader.Resource !== 'arn:aws:states:::s3:getObject')
    throw new UnsupportedDefinitionError(
      name,
      'ItemReader.Resource',
      'only arn:aws:states:::s3:getObject is emulated',
    );
  only(name, 'ItemReader.', reader, new Set(['Resource', 'ReaderConfig', 'Parameters']));
  const config = isObject(reader.ReaderConfig) ? reader.ReaderConfig : {};
  only(name, 'ItemReader.ReaderConfig.', config, new Set(['InputType', 'MaxItems']));
  if (config.InputType !== 'JSONL' && config.InputType !== 'JSON')
    throw new UnsupportedDefinitionError(
      name,
      'ItemReader.ReaderConfig.InputType',
      'only JSONL and JSON are emulated',
    );
  const parameters = isObject(reader.Parameters) ? reader.Parameters : {};
  only(name, 'ItemReader.Parameters.', parameters, new Set(['Bucket', 'Bucket.$', 'Key', 'Key.$']));
  checkTemplate(name, 'ItemReader.Parameters', parameters);

  let batcher: MapPlan['batcher'];
  if (map.ItemBatcher !== undefined) {
    const b = isObject(map.ItemBatcher) ? map.ItemBatcher : {};
    only(name, 'ItemBatcher.', b, new Set(['MaxItemsPerBatch', 'MaxInputBytesPerBatch', 'BatchInput']));
    batcher = {
      maxItems: integer(name, 'ItemBatcher.MaxItemsPerBatch', b.MaxItemsPerBatch, Number.MAX_SAFE_INTEGER),
      // Step Functions' own bound on a batch (and on any input): 256 KiB.
      maxBytes: integer(name, 'ItemBatcher.MaxInputBytesPerBatch', b.MaxInputBytesPerBatch, 262_144, 262_144),
      batchInput: checkTemplate(name, 'ItemBatcher.BatchInput', b.BatchInput),
    };
  }

  let writer: MapPlan['writer'];
  if (map.ResultWriter !== undefined) {
    const w = isObject(map.ResultWriter) ? map.ResultWriter : {};
    only(name, 'ResultWriter.', w, new Set(['Resource', 'Parameters']));
    const p = isObject(w.Parameters) ? w.Parameters : {};
    if (w.Resource !== 'arn:aws:states:::s3:putObject' || typeof p.Bucket !== 'string')
      throw new UnsupportedDefinitionError(
        name,
        'ResultWriter',
        'only arn:aws:states:::s3:putObject with a literal Bucket is emulated',
      );
    only(name, 'ResultWriter.Parameters.', p, new Set(['Bucket', 'Prefix']));
    writer = { bucket: p.Bucket, prefix: typeof p.Prefix === 'string' ? p.Prefix : '' };
  }

  return {
    state: name,
    reader: {
      inputType: config.InputType,
      bucket: parameters['Bucket.$'] === undefined ? parameters.Bucket : { 'v.$': parameters['Bucket.$'] },
      key: parameters['Key.$'] === undefined ? parameters.Key : { 'v.$': parameters['Key.$'] },
      maxItems:
        config.MaxItems === undefined
          ? undefined
          : integer(name, 'ItemReader.ReaderConfig.MaxItems', config.MaxItems, 0, 100_000_000),
    },
    itemSelector:
      map.ItemSelector === undefined ? undefined : checkTemplate(name, 'ItemSelector', map.ItemSelector),
    batcher,
    maxConcurrency: integer(name, 'MaxConcurrency', map.MaxConcurrency, 0),
    toleratedPercentage:
      map.ToleratedFailurePercentage === undefined
        ? undefined
        : integer(name, 'ToleratedFailurePercentage', map.ToleratedFailurePercentage, 0, 100),
    toleratedCount:
      map.ToleratedFailureCount === undefined
        ? undefined
        : integer(name, 'ToleratedFailureCount', map.ToleratedFailureCount, 0),
    executionType,
    task: {
      state: taskName,
      resource: task.Resource,
      timeoutSeconds:
        task.TimeoutSeconds === undefined
          ? undefined
          : integer(taskName, 'TimeoutSeconds', task.TimeoutSeconds, 0),
    },
    writer,
  };
}

/** What a template's paths read: `$` the Map's input, `$$` the context object. */
export interface PathScope {
  readonly input: unknown;
  readonly context: unknown;
}

function read(path: string, scope: PathScope, state: string, field: string): unknown {
  const root = path.startsWith('$$') ? scope.context : scope.input;
  let value: unknown = root;
  for (const part of path
    .replace(/^\$\$?/, '')
    .split('.')
    .slice(1)) {
    if (!isObject(value) || !(part in value))
      throw new MapRunError(
        state,
        'States.Runtime',
        `${field}: the path ${path} names nothing in ${path.startsWith('$$') ? 'the context object' : 'the input'}`,
      );
    value = value[part];
  }
  return value;
}

/** A Parameters-style template filled from its paths (the `.$` suffix dropped from their names). */
export function fill(template: Template, scope: PathScope, state: string, field: string): unknown {
  if (!isObject(template)) return template;
  const out: Json = {};
  for (const [key, value] of Object.entries(template)) {
    if (key.endsWith('.$')) out[key.slice(0, -2)] = read(value as string, scope, state, `${field}.${key}`);
    else out[key] = fill(value, scope, state, `${field}.${key}`);
  }
  return out;
}
