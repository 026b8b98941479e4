import type { FilterPattern } from '../../filters/index.js';
import { TemplateReadError } from './errors.js';
import { isRecord } from './intrinsics.js';
import type { StreamEventSettings, StreamFunctionSettings } from './stream-function.js';

/**
 * A stream mapping and its function as a CloudFormation template holds them (a CDK app's
 * AWS::Lambda::EventSourceMapping, a SAM function's DynamoDB event — SAM copies those properties
 * onto the mapping it generates, so both read the same names), in the emulator's terms. Shared by
 * the SAM reader (sam-template.ts) and the cdk.out reader (cdk-out.ts).
 */

/** Where a property was read, for errors: the template file and the resource's logical id. */
export interface TemplateSite {
  file: string;
  resource: string;
}

// Properties of a DynamoDB stream mapping the emulator runs, or that change nothing locally
// (MetricsConfig, the function, the source). Anything else is a typo or a Kinesis/Kafka setting.
const MAPPING_PROPERTIES = new Set([
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
 * resource and `Stream` on a SAM DynamoDB event; `prefix` places the properties in messages.
 */
export function mappingSettings(
  site: TemplateSite,
  properties: Record<string, unknown>,
  arnProperty: 'EventSourceArn' | 'Stream',
  prefix = '',
): StreamEventSettings {
  const fail = (property: string, detail: string): never => {
    throw new TemplateReadError(site.file, site.resource, `${prefix}${property}`, detail);
  };
  for (const key of Object.keys(properties))
    if (!MAPPING_PROPERTIES.has(key)) fail(key, 'is not a DynamoDB stream mapping property');
  const arn = properties[arnProperty];
  if (arn === undefined) fail(arnProperty, 'is missing: the mapping names no stream');
  const startingPosition = properties.StartingPosition ?? 'TRIM_HORIZON';
  if (startingPosition !== 'TRIM_HORIZON' && startingPosition !== 'LATEST')
    fail(
      'StartingPosition',
      `must be TRIM_HORIZON or LATEST for a DynamoDB stream, got ${JSON.stringify(startingPosition)}`,
    );
  const flag = (property: string): boolean => {
    const value = properties[property];
    if (value === undefined) return false;
    if (typeof value !== 'boolean') fail(property, `must be true or false, got ${JSON.stringify(value)}`);
    return value as boolean;
  };
  const out: StreamEventSettings = {
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
    handlerModule: `${code.dir}/${(handler as string).slice(0, cut)}`,
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

/**
 * A mapping's stream must be one the local servers will have: `Fn::GetAtt [Table, StreamArn]` of
 * a table with a StreamSpecification in the template, or a stream ARN naming such a table by its
 * TableName. Anything else would start a runtime with a mapping that reads nothing.
 */
export function checkStreamSource(
  site: TemplateSite,
  property: string,
  arn: unknown,
  resources: TemplateResourceMap,
): void {
  const fail = (detail: string): never => {
    throw new TemplateReadError(site.file, site.resource, property, detail);
  };
  const getAtt = isRecord(arn) && Object.keys(arn).length === 1 ? arn['Fn::GetAtt'] : undefined;
  const [id, attribute] =
    typeof getAtt === 'string' ? getAtt.split(/\.(.*)/s) : Array.isArray(getAtt) ? getAtt : [];
  const hasStream = (table: TemplateResourceMap[string] | undefined) =>
    table?.Type === 'AWS::DynamoDB::Table' &&
    isRecord(table.Properties?.StreamSpecification) &&
    table.Properties.StreamSpecification.StreamViewType !== undefined;
  if (id !== undefined) {
    const table = resources[String(id)];
    if (attribute !== 'StreamArn' || table?.Type !== 'AWS::DynamoDB::Table')
      fail(
        `names ${String(id)}.${String(attribute)}: not the StreamArn of an AWS::DynamoDB::Table in the template`,
      );
    if (!hasStream(table))
      fail(`names ${String(id)}, a table without a StreamSpecification: it has no stream`);
    return;
  }
  if (typeof arn === 'string') {
    const name = /:table\/([^/]+)\/stream\//.exec(arn)?.[1];
    const local = Object.values(resources).some((r) => hasStream(r) && r.Properties?.TableName === name);
    if (!local) fail(`${arn} is not the stream of a table the template declares with a stream`);
    return;
  }
  fail(
    `${JSON.stringify(arn)} is not resolved locally (give Fn::GetAtt [Table, StreamArn] of a table in the template)`,
  );
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
