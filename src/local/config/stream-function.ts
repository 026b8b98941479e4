import { existsSync } from 'node:fs';
import type { FilterPattern } from '../../filters/index.js';
import type { EventSourceMappingOptions } from '../emulator/emulator.js';
import { builtPathOf, MODULE_EXTENSIONS } from '../emulator/handler-loader.js';
import { ServerlessConfigError } from './errors.js';
import { strToBool } from './variables.js';

/** A function's `stream` event, in the emulator's terms, plus what the local runtime needs to run it. */
export interface StreamFunctionSettings {
  /** The key under `functions:`. */
  key: string;
  /** The deployed name: `<service>-<stage>-<key>` unless `name:` says otherwise. */
  functionName: string;
  /** `handler:` as written, e.g. `src/handlers/archive-ttl.handler`. */
  handler: string;
  /** Absolute module path without extension, e.g. `/repo/src/handlers/archive-ttl`. */
  handlerModule: string;
  /** The exported function's name, e.g. `handler`. */
  handlerExport: string;
  timeoutSeconds: number;
  memorySize: number;
  /** Resolved function + provider environment (CloudFormation intrinsics left as objects). */
  environment: Record<string, unknown>;
  stream: StreamEventSettings;
}

/** A function's stream event as serverless.yml, SAM or CDK declares it: source, ARN and mapping settings. */
export interface StreamEventSettings {
  /** `kinesis` for a Kinesis data stream (`type: kinesis`); absent for a DynamoDB stream. */
  source?: 'kinesis';
  /** The `arn:` value (often a CloudFormation intrinsic). */
  arn: unknown;
  enabled: boolean;
  /** DynamoDB streams take TRIM_HORIZON or LATEST only (AT_TIMESTAMP is Kinesis' and Kafka's). */
  startingPosition: 'TRIM_HORIZON' | 'LATEST';
  batchSize?: number;
  maximumBatchingWindowInSeconds?: number;
  filterPatterns?: FilterPattern[];
  reportBatchItemFailures: boolean;
  bisectBatchOnFunctionError: boolean;
  maximumRetryAttempts?: number;
  maximumRecordAgeInSeconds?: number;
  parallelizationFactor?: number;
  tumblingWindowInSeconds?: number;
  /** destinations.onFailure: the ARN (or intrinsic) and type (`sqs` / `sns` / `s3`). */
  onFailure?: { arn: unknown; type?: string };
}

// serverless v3's schema for `stream` events; anything else is a typo.
const STREAM_KEYS = [
  'arn',
  'type',
  'batchSize',
  'batchWindow',
  'parallelizationFactor',
  'startingPosition',
  'startingPositionTimestamp',
  'enabled',
  'consumer',
  'bisectBatchOnFunctionError',
  'maximumRetryAttempts',
  'maximumRecordAgeInSeconds',
  'functionResponseType',
  'destinations',
  'tumblingWindowInSeconds',
  'filterPatterns',
] as const;

/**
 * A function's `stream` event as serverless v3 reads it, for a DynamoDB or a Kinesis stream
 * (`source: 'kinesis'`); unknown keys and ill-typed values are ServerlessConfigErrors.
 */
export function parseStreamEvent(key: string, raw: unknown, file: string): StreamEventSettings | undefined {
  const where = `functions.${key}.events[].stream`;
  if (typeof raw === 'string') {
    const kinesis = raw.includes(':kinesis:');
    return raw.includes(':dynamodb:') || kinesis
      ? {
          ...(kinesis ? { source: 'kinesis' as const } : {}),
          arn: raw,
          enabled: true,
          startingPosition: 'TRIM_HORIZON',
          reportBatchItemFailures: false,
          bisectBatchOnFunctionError: false,
        }
      : undefined;
  }
  if (raw === null || typeof raw !== 'object')
    throw new ServerlessConfigError(file, `${where} must be an ARN or a mapping`);
  const s = raw as Record<string, unknown>;
  const unknown = Object.keys(s).filter((k) => !(STREAM_KEYS as readonly string[]).includes(k));
  if (unknown.length)
    throw new ServerlessConfigError(
      file,
      `${where}: unknown key(s) ${unknown.join(', ')} (known: ${STREAM_KEYS.join(', ')})`,
    );
  const arn = s.arn;
  const isDynamo =
    s.type === 'dynamodb' ||
    (s.type === undefined &&
      (typeof arn === 'string'
        ? arn.includes(':dynamodb:')
        : JSON.stringify(arn ?? '').includes('StreamArn')));
  const isKinesis =
    s.type === 'kinesis' || (s.type === undefined && typeof arn === 'string' && arn.includes(':kinesis:'));
  if (!isDynamo && !isKinesis) return undefined;
  if (isKinesis && s.consumer !== undefined)
    throw new ServerlessConfigError(
      file,
      `${where}.consumer: enhanced fan-out consumers are not emulated locally (the mapping reads the stream with GetRecords)`,
    );
  const num = (name: string) =>
    s[name] === undefined ? undefined : toNumber(s[name], `${where}.${name}`, file);
  const destinations = s.destinations as { onFailure?: unknown } | undefined;
  const onFailure = destinations?.onFailure;
  const out: StreamEventSettings = {
    ...(isKinesis ? { source: 'kinesis' as const } : {}),
    arn,
    enabled: s.enabled === undefined ? true : toBoolean(s.enabled, `${where}.enabled`, file),
    startingPosition: (s.startingPosition as StreamEventSettings['startingPosition']) ?? 'TRIM_HORIZON',
    reportBatchItemFailures: s.functionResponseType === 'ReportBatchItemFailures',
    bisectBatchOnFunctionError:
      s.bisectBatchOnFunctionError === undefined
        ? false
        : toBoolean(s.bisectBatchOnFunctionError, `${where}.bisectBatchOnFunctionError`, file),
  };
  // "StartingPosition: TRIM_HORIZON or LATEST" (Lambda developer guide, DynamoDB event source
  // mapping parameters): AT_TIMESTAMP, which serverless v3 accepts for any stream, is for Kinesis
  // and Kafka, and CreateEventSourceMapping refuses it for a DynamoDB stream at deploy time.
  if (isKinesis && !['TRIM_HORIZON', 'LATEST'].includes(out.startingPosition)) {
    throw new ServerlessConfigError(
      file,
      `${where}.startingPosition must be TRIM_HORIZON or LATEST locally, got ${JSON.stringify(s.startingPosition)}` +
        ' (AT_TIMESTAMP is not emulated by the local Kinesis mapping)',
    );
  }
  if (!['TRIM_HORIZON', 'LATEST'].includes(out.startingPosition)) {
    throw new ServerlessConfigError(
      file,
      `${where}.startingPosition must be TRIM_HORIZON or LATEST for a DynamoDB stream, got ` +
        `${JSON.stringify(s.startingPosition)}` +
        (s.startingPosition === 'AT_TIMESTAMP' ? ' (AT_TIMESTAMP is for Kinesis and Kafka sources)' : ''),
    );
  }
  if (s.startingPositionTimestamp !== undefined) {
    throw new ServerlessConfigError(
      file,
      `${where}.startingPositionTimestamp goes with startingPosition AT_TIMESTAMP, which a DynamoDB stream does not take`,
    );
  }
  for (const [to, from] of NUMERIC_STREAM_SETTINGS) {
    const value = num(from);
    if (value !== undefined) (out as unknown as Record<string, unknown>)[to] = value;
  }
  if (s.filterPatterns !== undefined) {
    if (!Array.isArray(s.filterPatterns))
      throw new ServerlessConfigError(file, `${where}.filterPatterns must be a list`);
    out.filterPatterns = s.filterPatterns as FilterPattern[];
  }
  if (onFailure !== undefined) {
    const target = onFailure as { arn?: unknown; type?: unknown } | null;
    out.onFailure =
      target !== null && typeof target === 'object' && 'arn' in target
        ? { arn: target.arn, ...(typeof target.type === 'string' ? { type: target.type } : {}) }
        : { arn: onFailure };
  }
  return out;
}

/**
 * The numeric settings of a stream event: the emulator option (and StreamEventSettings key) and
 * serverless.yml's name for it. Read from serverless.yml and handed to the emulator from this one list.
 */
const NUMERIC_STREAM_SETTINGS = [
  ['batchSize', 'batchSize'],
  ['maximumBatchingWindowInSeconds', 'batchWindow'],
  ['maximumRetryAttempts', 'maximumRetryAttempts'],
  ['maximumRecordAgeInSeconds', 'maximumRecordAgeInSeconds'],
  ['parallelizationFactor', 'parallelizationFactor'],
  ['tumblingWindowInSeconds', 'tumblingWindowInSeconds'],
] as const satisfies ReadonlyArray<
  readonly [keyof StreamEventSettings & keyof EventSourceMappingOptions, string]
>;

/**
 * The emulator options a function's stream event means. The on-failure destination is left to
 * the caller (it needs a client for the queue / bucket the ARN names).
 */
export function toEmulatorOptions(
  settings: StreamFunctionSettings,
  options: { region?: string; accountId?: string } = {},
): Omit<EventSourceMappingOptions, 'handler'> {
  const s = settings.stream;
  const out: Omit<EventSourceMappingOptions, 'handler'> = {
    functionName: settings.functionName,
    timeoutSeconds: settings.timeoutSeconds,
    memorySize: settings.memorySize,
    ...(options.region ? { region: options.region } : {}),
    ...(options.accountId ? { accountId: options.accountId } : {}),
    ...(s.filterPatterns ? { filterPatterns: s.filterPatterns } : {}),
    reportBatchItemFailures: s.reportBatchItemFailures,
    bisectBatchOnFunctionError: s.bisectBatchOnFunctionError,
  };
  for (const [key] of NUMERIC_STREAM_SETTINGS) {
    const value = s[key];
    if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  return out;
}

/**
 * The handler's file: the first of .ts, .mts, .js, .mjs, .cjs that exists next to handlerModule;
 * failing that, given the project root, its built copy under `<root>/dist` (a package that ships
 * dist/ but not src/, like tidewater's own demo service).
 */
export function handlerFile(
  settings: Pick<StreamFunctionSettings, 'handler' | 'handlerModule'>,
  options: { root?: string } = {},
): string {
  for (const ext of MODULE_EXTENSIONS) {
    const candidate = `${settings.handlerModule}${ext}`;
    if (existsSync(candidate)) return candidate;
  }
  const built = options.root ? builtPathOf(`${settings.handlerModule}.ts`, options.root) : undefined;
  if (built) {
    for (const candidate of [built, built.replace(/\.js$/, '.mjs')])
      if (existsSync(candidate)) return candidate;
  }
  throw new ServerlessConfigError(
    settings.handlerModule,
    `no handler file for '${settings.handler}' (.ts, .mts, .js, .mjs or .cjs)`,
  );
}

export function toNumber(value: unknown, name: string, file: string): number {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && value.trim() !== ''
        ? Number(value)
        : Number.NaN;
  if (!Number.isFinite(n))
    throw new ServerlessConfigError(file, `${name} must be a number, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * A boolean setting read the way ${strToBool(…)} reads text, so 'TRUE' or 1 work as they would
 * through a variable; anything else is an error, because reading a typo ('ture', 'yes') as false
 * would silently turn a mapping or its bisecting off.
 */
function toBoolean(value: unknown, name: string, file: string): boolean {
  if (typeof value === 'boolean') return value;
  const parsed =
    typeof value === 'string' || typeof value === 'number' ? strToBool(String(value)) : undefined;
  if (parsed === undefined)
    throw new ServerlessConfigError(
      file,
      `${name} must be true, false, 1 or 0, got ${JSON.stringify(value)}`,
    );
  return parsed;
}
