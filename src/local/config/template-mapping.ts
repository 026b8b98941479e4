import type { FilterPattern } from '../../filters/index.js';
import { kinesisArnStream, streamArnTable } from '../../records/stream-arn-names.js';
import { TemplateReadError } from './errors.js';
import { isRecord } from './intrinsics.js';
import { resolveModuleInside } from './paths.js';
import type { StreamEventSettings, StreamFunctionSettings } from './stream-function.js';

/**
 * A stream mapping and its function as a CloudFormation template holds them (a CDK app's
 * AWS::Lambda::EventSourceMapping, a SAM function's DynamoDB or Kinesis event — SAM copies those
 * properties onto the mapping it generates, so both read the same names), in the emulator's terms.
 * Shared by the SAM reader (sam-template.ts), the cdk.out reader (cdk-out.ts) and the mappings of
 * serverless.yml's `resources:` (service-mappings.ts).
 */

/** Which stream a mapping reads: a table's DynamoDB stream or a Kinesis data stream. */
export type MappingSource = 'dynamodb' | 'kinesis';

/** Where a property was read, for errors: the template file and the resource's logical id. */
export interface TemplateSite {
  file: string;
  resource: string;
}

// Properties of a DynamoDB stream mapping the emulator runs, or that change nothing locally
// (MetricsConfig, the function, the source). Anything else is a typo or a Kinesis/Kafka setting.
const DYNAMODB_PROPERTIES = new Set([
  'EventSourceArn',
  'Stream',
  'FunctionName',
  'Enabled',
  'StartingPosition',
  'BatchSize',
  'MaximumBatchingWindowInSeconds',
  'FilterCriteria',
  'FunctionResponseTypes',
  'BisectBatchOnFunctionError',
  'MaximumRetryAttempts',
  'MaximumRecordAgeInSeconds',
  'ParallelizationFactor',
  'TumblingWindowInSeconds',
  'DestinationConfig',
  'MetricsConfig',
]);
// A Kinesis mapping's own: StartingPositionTimestamp (refused below with its AT_TIMESTAMP) and
// KmsKeyArn, the key Lambda encrypts the filter criteria with, which changes nothing locally.
const KINESIS_PROPERTIES = new Set([...DYNAMODB_PROPERTIES, 'StartingPositionTimestamp', 'KmsKeyArn']);

const NUMBERS = [
  ['batchSize', 'BatchSize'],
  ['maximumBatchingWindowInSeconds', 'MaximumBatchingWindowInSeconds'],
  ['maximumRetryAttempts', 'MaximumRetryAttempts'],
  ['maximumRecordAgeInSeconds', 'MaximumRecordAgeInSeconds'],
  ['parallelizationFactor', 'ParallelizationFactor'],
  ['tumblingWindowInSeconds', 'TumblingWindowInSeconds'],
] as const;

/**
 * A mapping's properties as StreamEventSettings. `arnProperty` is `EventSourceArn` on a mapping
 * resource and `Stream` on a SAM DynamoDB or Kinesis event; `source` is what the stream is
 * (mappingSource, or the SAM event's Type); `prefix` places the properties in messages.
 */
export function mappingSettings(
  site: TemplateSite,
  properties: Record<string, unknown>,
  arnProperty: 'EventSourceArn' | 'Stream',
  prefix = '',
  source: MappingSource = 'dynamodb',
): StreamEventSettings {
  const fail = (property: string, detail: string): never => {
    throw new TemplateReadError(site.file, site.resource, `${prefix}${property}`, detail);
  };
  const kinesis = source === 'kinesis';
  const known = kinesis ? KINESIS_PROPERTIES : DYNAMODB_PROPERTIES;
  for (const key of Object.keys(properties))
    if (!known.has(key)) fail(key, `is not a ${kinesis ? 'Kinesis' : 'DynamoDB'} stream mapping property`);
  const arn = properties[arnProperty];
  if (arn === undefined) fail(arnProperty, 'is missing: the mapping names no stream');
  const startingPosition = properties.StartingPosition ?? 'TRIM_HORIZON';
  // AT_TIMESTAMP is a Kinesis position, but the local shard reader starts only at either end of
  // the stream (as serverless.yml's reader says for `startingPosition`).
  if (startingPosition !== 'TRIM_HORIZON' && startingPosition !== 'LATEST')
    fail(
      'StartingPosition',
      kinesis
        ? `must be TRIM_HORIZON or LATEST locally, got ${JSON.stringify(startingPosition)} (AT_TIMESTAMP is not emulated by the local Kinesis mapping)`
        : `must be TRIM_HORIZON or LATEST for a DynamoDB stream, got ${JSON.stringify(startingPosition)}`,
    );
  if (properties.StartingPositionTimestamp !== undefined)
    fail(
      'StartingPositionTimestamp',
      'goes with StartingPosition AT_TIMESTAMP, which the local Kinesis mapping does not emulate',
    );
  const flag = (property: string): boolean => {
    const value = properties[property];
    if (value === undefined) return false;
    if (typeof value !== 'boolean') fail(property, `must be true or false, got ${JSON.stringify(value)}`);
    return value as boolean;
  };
  const out: StreamEventSettings = {
    ...(kinesis ? { source: 'kinesis' as const } : {}),
    arn,
    enabled: properties.Enabled === undefined ? true : flag('Enabled'),
    startingPosition: startingPosition as StreamEventSettings['startingPosition'],
    reportBatchItemFailures: responseTypes(properties.FunctionResponseTypes, fail),
    bisectBatchOnFunctionError: flag('BisectBatchOnFunctionError'),
  };
  for (const [key, property] of NUMBERS) {
    const value = properties[property];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value))
      fail(property, `must be a number, got ${JSON.stringify(value)}`);
    out[key] = value as number;
  }
  if (properties.FilterCriteria !== undefined)
    out.filterPatterns = filterPatterns(properties.FilterCriteria, fail);
  const destination = properties.DestinationConfig;
  if (destination !== undefined) {
    const target =
      isRecord(destination) && isRecord(destination.OnFailure) ? destination.OnFailure : undefined;
    if (target?.Destination === undefined)
      fail('DestinationConfig', 'must hold OnFailure.Destination (a queue, topic or bucket ARN)');
    const type = typeof target?.Type === 'string' ? target.Type.toLowerCase() : undefined;
    out.onFailure = { arn: target?.Destination, ...(type ? { type } : {}) };
  }
  return out;
}

function responseTypes(value: unknown, fail: (property: string, detail: string) => never): boolean {
  if (value === undefined) return false;
  if (!Array.isArray(value) || value.some((v) => v !== 'ReportBatchItemFailures'))
    fail(
      'FunctionResponseTypes',
      `must be [ReportBatchItemFailures] or absent, got ${JSON.stringify(value)}`,
    );
  return (value as unknown[]).length > 0;
}

/** FilterCriteria.Filters[].Pattern: JSON text in CloudFormation, as the builder's exporter writes it. */
function filterPatterns(value: unknown, fail: (property: string, detail: string) => never): FilterPattern[] {
  const filters = isRecord(value) ? value.Filters : undefined;
  if (!Array.isArray(filters)) return fail('FilterCriteria', 'must be { Filters: [{ Pattern }] }');
  return filters.map((filter, i) => {
    const pattern = isRecord(filter) ? filter.Pattern : undefined;
    if (typeof pattern !== 'string')
      return fail(
        `FilterCriteria.Filters[${i}].Pattern`,
        'must be JSON text (an intrinsic cannot be read locally)',
      );
    try {
      return JSON.parse(pattern) as FilterPattern;
    } catch (error) {
      return fail(`FilterCriteria.Filters[${i}].Pattern`, `is not JSON (${(error as Error).message})`);
    }
  });
}

// The intrinsics the local runtime resolves in a function's environment (intrinsics.ts).
const ENVIRONMENT_INTRINSICS = new Set(['Ref', 'Fn::GetAtt', 'Fn::Join', 'Fn::Sub', 'Fn::Select', 'Fn::If']);

/** A Lambda function's properties (plain CloudFormation or SAM, after Globals) as the settings of one stream mapping. */
export function functionSettings(
  site: TemplateSite,
  properties: Record<string, unknown>,
  code: { dir: string },
  stream: StreamEventSettings,
): StreamFunctionSettings {
  const fail = (property: string, detail: string): never => {
    throw new TemplateReadError(site.file, site.resource, property, detail);
  };
  const handler = properties.Handler;
  if (typeof handler !== 'string' || !/^[^.]+(?:\.[^.]+)*\.[A-Za-z_$][\w$]*$/.test(handler))
    fail('Handler', `must be <file>.<export>, got ${JSON.stringify(handler)}`);
  const cut = (handler as string).lastIndexOf('.');
  const variables = isRecord(properties.Environment) ? properties.Environment.Variables : undefined;
  const environment = isRecord(variables) ? variables : {};
  for (const [name, value] of Object.entries(environment)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') continue;
    const intrinsic = isRecord(value) ? Object.keys(value) : [];
    if (isRecord(value) && intrinsic.length === 1 && intrinsic[0] === 'Fn::ImportValue')
      fail(
        `Environment.Variables.${name}`,
        `Fn::ImportValue ${JSON.stringify(value['Fn::ImportValue'])}: no stack read here exports it ` +
          '(an import resolves locally only to an export of another stack in the same cdk.out)',
      );
    if (intrinsic.length !== 1 || !ENVIRONMENT_INTRINSICS.has(intrinsic[0] as string))
      fail(
        `Environment.Variables.${name}`,
        `${JSON.stringify(value)} is not resolved locally (strings, Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::If)`,
      );
  }
  const number = (property: string, fallback: number): number => {
    const value = properties[property] ?? fallback;
    if (typeof value !== 'number') fail(property, `must be a number, got ${JSON.stringify(value)}`);
    return value as number;
  };
  return {
    key: site.resource,
    functionName: typeof properties.FunctionName === 'string' ? properties.FunctionName : site.resource,
    handler: handler as string,
    // The handler is a file of the function's code: inside its folder, as it is inside the zip.
    handlerModule: resolveModuleInside(code.dir, (handler as string).slice(0, cut), (detail) =>
      fail('Handler', detail),
    ),
    handlerExport: (handler as string).slice(cut + 1),
    // Lambda's defaults when a template leaves them out.
    timeoutSeconds: number('Timeout', 3),
    memorySize: number('MemorySize', 128),
    environment,
    stream,
  };
}

/** A template's resources by logical id, as the readers hand them to the planner. */
export type TemplateResourceMap = Readonly<
  Record<string, { readonly Type: string; readonly Properties?: Record<string, unknown> }>
>;

/** `Fn::GetAtt [Id, Attribute]` (list or dotted form) or `Ref Id`: the logical id and attribute. */
export function referenceOf(value: unknown): { id: string; attribute?: string } | undefined {
  if (!isRecord(value) || Object.keys(value).length !== 1) return undefined;
  if (typeof value.Ref === 'string') return { id: value.Ref };
  const getAtt = value['Fn::GetAtt'];
  const [id, attribute] =
    typeof getAtt === 'string' ? getAtt.split(/\.(.*)/s) : Array.isArray(getAtt) ? getAtt : [];
  return id === undefined ? undefined : { id: String(id), attribute: String(attribute) };
}

const KINESIS_STREAM = 'AWS::Kinesis::Stream';
const KINESIS_CONSUMER = 'AWS::Kinesis::StreamConsumer';

/**
 * What a mapping resource's EventSourceArn reads, by what it names: a Kinesis stream or stream
 * consumer of the template, or a `:kinesis:` ARN, is Kinesis; anything else is read as a DynamoDB
 * stream (and checkStreamSource says when it is not one).
 */
export function mappingSource(
  arn: unknown,
  resources: TemplateResourceMap,
  parameters: Readonly<Record<string, string>> = {},
): MappingSource {
  const ref = referenceOf(arn);
  const value = ref?.attribute === undefined && ref && ref.id in parameters ? parameters[ref.id] : arn;
  if (typeof value === 'string') return value.includes(':kinesis:') ? 'kinesis' : 'dynamodb';
  const type = ref ? resources[ref.id]?.Type : undefined;
  return type === KINESIS_STREAM || type === KINESIS_CONSUMER ? 'kinesis' : 'dynamodb';
}

/**
 * A mapping's stream must be one the local servers will have: for a DynamoDB stream
 * `Fn::GetAtt [Table, StreamArn]` of a table with a StreamSpecification in the template, or a
 * stream ARN naming such a table by its TableName; for a Kinesis stream `Fn::GetAtt [Stream, Arn]`
 * of an AWS::Kinesis::Stream in the template, or an ARN naming one by its Name. A `Ref` to a
 * parameter is its Default. Anything else would start a runtime with a mapping that reads nothing;
 * an enhanced fan-out consumer is refused, as serverless.yml's `consumer:` is.
 */
export function checkStreamSource(
  site: TemplateSite,
  property: string,
  stream: Pick<StreamEventSettings, 'arn' | 'source'>,
  resources: TemplateResourceMap,
  parameters: Readonly<Record<string, string>> = {},
): void {
  const ref = referenceOf(stream.arn);
  const arn = ref?.attribute === undefined && ref && ref.id in parameters ? parameters[ref.id] : stream.arn;
  const named = typeof arn === 'string' ? undefined : ref;
  const check = stream.source === 'kinesis' ? kinesisStreamProblem : tableStreamProblem;
  const problem = check(arn, named, resources);
  if (problem) throw new TemplateReadError(site.file, site.resource, property, problem);
}

type Named = ReturnType<typeof referenceOf>;

function kinesisStreamProblem(
  arn: unknown,
  named: Named,
  resources: TemplateResourceMap,
): string | undefined {
  const resource = named ? resources[named.id] : undefined;
  if (resource?.Type === KINESIS_CONSUMER || (typeof arn === 'string' && arn.includes('/consumer/')))
    return (
      'names an enhanced fan-out consumer (AWS::Kinesis::StreamConsumer): not emulated locally ' +
      '(the mapping reads the stream with GetRecords; give the stream itself)'
    );
  if (named) {
    if (resource?.Type === KINESIS_STREAM && named.attribute === undefined)
      return `Ref ${named.id} is the stream's name: give Fn::GetAtt [${named.id}, Arn]`;
    if (resource?.Type !== KINESIS_STREAM || named.attribute !== 'Arn')
      return `names ${named.id}${named.attribute ? `.${named.attribute}` : ''}: not the Arn of an AWS::Kinesis::Stream in the template`;
    return undefined;
  }
  if (typeof arn === 'string') {
    const name = kinesisArnStream(arn);
    const local = Object.values(resources).some(
      (r) => r.Type === KINESIS_STREAM && name !== undefined && r.Properties?.Name === name,
    );
    return local ? undefined : `${arn} is not a Kinesis stream the template declares (by its Name)`;
  }
  return `${JSON.stringify(arn)} is not resolved locally (give Fn::GetAtt [Stream, Arn] of a stream in the template)`;
}

function tableStreamProblem(arn: unknown, named: Named, resources: TemplateResourceMap): string | undefined {
  const isTable = (table: TemplateResourceMap[string] | undefined): table is TemplateResourceMap[string] =>
    table?.Type === 'AWS::DynamoDB::Table' || table?.Type === 'AWS::DynamoDB::GlobalTable';
  const hasStream = (table: TemplateResourceMap[string] | undefined) =>
    isTable(table) &&
    isRecord(table.Properties?.StreamSpecification) &&
    table.Properties.StreamSpecification.StreamViewType !== undefined;
  if (named?.attribute !== undefined) {
    const table = resources[named.id];
    if (named.attribute !== 'StreamArn' || !isTable(table))
      return `names ${named.id}.${named.attribute}: not the StreamArn of an AWS::DynamoDB::Table (or GlobalTable) in the template`;
    return hasStream(table)
      ? undefined
      : `names ${named.id}, a table without a StreamSpecification: it has no stream`;
  }
  if (typeof arn === 'string') {
    const name = streamArnTable(arn);
    const local = Object.values(resources).some((r) => hasStream(r) && r.Properties?.TableName === name);
    return local ? undefined : `${arn} is not the stream of a table the template declares with a stream`;
  }
  return `${JSON.stringify(arn)} is not resolved locally (give Fn::GetAtt [Table, StreamArn] of a table in the template)`;
}

/**
 * `Parameters` with a Default, as `Ref` gives them when the stack is deployed without overrides;
 * a parameter without one stays out (a Ref to it is then an error naming it).
 */
export function parameterDefaults(parameters: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(parameters)) return out;
  for (const [name, parameter] of Object.entries(parameters)) {
    const value = isRecord(parameter) ? parameter.Default : undefined;
    if (typeof value === 'string' || typeof value === 'number') out[name] = String(value);
  }
  return out;
}
