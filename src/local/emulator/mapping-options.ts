import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { defineOptions, InvalidOptionsError } from '../../core/index.js';
import { DEFAULT_MAX_FILTERS, type FilterPattern, MAX_FILTERS_QUOTA } from '../../filters/index.js';
import type { TimeWindowEvent, TimeWindowResponse } from '../../pipeline/window-event.js';
import type { LambdaStreamEvent } from '../../records/index.js';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from '../servers/dynamodb-local.js';
import type { Clock } from './clock.js';
import type { FailureDestination } from './destinations.js';
import type { EmulatorEvent } from './emulator-log.js';
import { MAX_TUMBLING_WINDOW_SECONDS } from './tumbling-window.js';
import { DEFAULT_WAIT_BOUND_MS } from './wait-bound.js';

/**
 * What a handler may return: a partial batch response, nothing, or with a tumbling window the
 * window's state (`{ state, batchItemFailures? }`).
 */
export type StreamHandlerResult =
  | DynamoDBBatchResponse
  | TimeWindowResponse<unknown>
  | undefined
  // biome-ignore lint/suspicious/noConfusingVoidType: handlers written `async () => {}` return Promise<void>, as Lambda handlers do.
  | void;

/**
 * The event the emulator passes: assignable to both spellings of a stream event, so either kind of
 * handler fits; with a tumbling window it also carries window, state, shardId and the flags.
 */
export type StreamHandlerEvent = LambdaStreamEvent &
  DynamoDBStreamEvent &
  Partial<Omit<TimeWindowEvent<Record<string, unknown>>, 'Records'>>;

type HandlerShape = {
  // A method's parameters are compared both ways (bivariantly), so a handler declared for the
  // windowed event (`createWindowHandler`, `(event: TimeWindowEvent) => …`) fits as well as one
  // declared for the plain event; inline handlers still get StreamHandlerEvent as their type.
  handle(
    event: StreamHandlerEvent,
    context: Context,
    // biome-ignore lint/suspicious/noExplicitAny: any handler arity must be assignable; Lambda passes two arguments.
    ...rest: any[]
  ): Promise<StreamHandlerResult> | StreamHandlerResult;
};

/**
 * A Lambda handler for a DynamoDB stream: what `createStreamHandler` or `createWindowHandler`
 * returns, a middy handler, or a plain function typed with aws-lambda's `DynamoDBStreamEvent`,
 * tidewater's `LambdaStreamEvent` (one event, two spellings of its AttributeValue) or
 * `TimeWindowEvent`. The rest parameter admits handlers that declare more parameters than Lambda
 * passes (middy's takes a third, optional at run time).
 */
export type StreamHandler = HandlerShape['handle'];

/** An event source mapping's settings, named as in Lambda's API (camel-cased). */
export interface EventSourceMappingOptions {
  handler: StreamHandler;
  functionName?: string;
  /** Function timeout; default 3 s (Lambda's default). */
  timeoutSeconds?: number;
  memorySize?: number;
  region?: string;
  accountId?: string;
  /** 1–10000; default 100. */
  batchSize?: number;
  /** 0–300; default 0. */
  maximumBatchingWindowInSeconds?: number;
  /** FilterCriteria patterns (JSON strings or objects). A record passes when any pattern matches. */
  filterPatterns?: Array<string | FilterPattern>;
  /**
   * The account's filters-per-mapping quota: 5 by default, raised on request up to 10 (Lambda
   * developer guide, "Control which events Lambda sends to your function"). More patterns than
   * this fail at construction, as CreateEventSourceMapping would.
   */
  maxFilters?: number;
  /**
   * 0 (default, no window) to 900: aggregate each shard's records in tumbling windows of this
   * many seconds, the state carried from one invocation of a window to the next (see docs/local.md).
   */
  tumblingWindowInSeconds?: number;
  /** FunctionResponseTypes: ['ReportBatchItemFailures']. Default false. */
  reportBatchItemFailures?: boolean;
  /** The same setting as Lambda's API names it: `['ReportBatchItemFailures']` or `[]`. */
  functionResponseTypes?: readonly 'ReportBatchItemFailures'[];
  /** The same setting as serverless.yml's `stream.functionResponseType` names it. */
  functionResponseType?: 'ReportBatchItemFailures';
  bisectBatchOnFunctionError?: boolean;
  /** -1 (infinite, Lambda's default) or 0–10000. */
  maximumRetryAttempts?: number;
  /** -1 (infinite, default) or 60–604800. */
  maximumRecordAgeInSeconds?: number;
  /** 1–10; default 1. */
  parallelizationFactor?: number;
  onFailure?: FailureDestination;
  /** Wait between retries (ms, on the clock); default 0. */
  retryDelayMs?: number;
  /**
   * After a timeout, how long (ms) to wait at most for the abandoned handler call to settle before
   * the retry starts; default 10000. Lambda kills a timed-out runtime, so its retry never overlaps
   * the old call; Node cannot kill a promise, so the emulator waits for it instead. Past this cap
   * the retry starts anyway and the `response` event's error says the old call is still running.
   */
  timedOutSettleMs?: number;
  /**
   * Under unbounded retries (`maximumRetryAttempts` unset or -1), end the run with
   * `ReplayStalledError` once this many invocations in a row failed with no record checkpointed or
   * discarded in between; default 10 (`DEFAULT_STALL_AFTER_ATTEMPTS`). Lambda would retry until the
   * records expire from the stream (24 h), which locally is a run that never ends. A positive
   * integer, or `Infinity` to retry without end as Lambda does (`stop()` still ends it); 0 and
   * negative values are rejected. With `maximumRecordAgeInSeconds` set, an attempt after which the
   * clock moved (or with `retryDelayMs` > 0, which moves it) does not count: the age limit is
   * coming and will discard the records, as in Lambda. Ignored when `maximumRetryAttempts` is
   * bounded: that bound already ends the retries, exactly as Lambda does.
   */
  stallAfterAttempts?: number;
  /**
   * How long (ms) to wait at most for the next page of records, the `onCheckpoint` callback or the
   * on-failure destination's send before the run ends with EmulatorWaitTimeoutError naming what
   * it waited for; default 300000 (`DEFAULT_WAIT_BOUND_MS`). The handler call is bounded by
   * `timeoutSeconds` and `timedOutSettleMs` instead. `Infinity` waits without end.
   */
  waitBoundMs?: number;
  clock?: Clock;
  /** Called for each event as it happens (the CLI prints them). */
  onEvent?: (event: EmulatorEvent) => void;
  /** Keep events in `emulator.log`; default true. Turn off for long runs. */
  keepLog?: boolean;
}

/** Lambda's bounded range for a setting that also takes -1 (no limit). */
function rangeOrUnbounded(min: number, max: number) {
  return {
    kind: 'custom',
    expected: `-1 or an integer from ${min} to ${max}`,
    check: (value: unknown) =>
      value === -1 || (Number.isInteger(value) && (value as number) >= min && (value as number) <= max),
  } as const;
}

export const readMappingOptions = defineOptions<EventSourceMappingOptions>()('EventSourceMappingEmulator', {
  handler: { kind: 'function', required: true },
  functionName: { kind: 'nonEmptyString', default: 'local-function' },
  timeoutSeconds: {
    kind: 'custom',
    expected: 'a number of seconds in (0, 900]',
    check: (value) => typeof value === 'number' && value > 0 && value <= 900,
    default: 3,
  },
  memorySize: { kind: 'integer', min: 1, default: 1024 },
  region: { kind: 'nonEmptyString', default: LOCAL_REGION },
  accountId: { kind: 'nonEmptyString', default: LOCAL_ACCOUNT_ID },
  batchSize: { kind: 'integer', min: 1, max: 10_000, default: 100 },
  maximumBatchingWindowInSeconds: { kind: 'integer', min: 0, max: 300, default: 0 },
  filterPatterns: { kind: 'custom', expected: 'a list of filter patterns', check: Array.isArray },
  maxFilters: { kind: 'integer', min: 1, max: MAX_FILTERS_QUOTA, default: DEFAULT_MAX_FILTERS },
  tumblingWindowInSeconds: { kind: 'integer', min: 0, max: MAX_TUMBLING_WINDOW_SECONDS, default: 0 },
  reportBatchItemFailures: { kind: 'boolean' },
  functionResponseTypes: {
    kind: 'custom',
    expected: "['ReportBatchItemFailures'] or []",
    check: (value) => Array.isArray(value) && value.every((type) => type === 'ReportBatchItemFailures'),
  },
  functionResponseType: { kind: 'enum', values: ['ReportBatchItemFailures'] },
  bisectBatchOnFunctionError: { kind: 'boolean', default: false },
  maximumRetryAttempts: { ...rangeOrUnbounded(0, 10_000), default: -1 },
  maximumRecordAgeInSeconds: { ...rangeOrUnbounded(60, 604_800), default: -1 },
  parallelizationFactor: { kind: 'integer', min: 1, max: 10, default: 1 },
  onFailure: { kind: 'object', methods: ['send'], expected: 'a FailureDestination (with send())' },
  retryDelayMs: { kind: 'number', min: 0, default: 0 },
  timedOutSettleMs: { kind: 'integer', min: 0, max: 900_000, default: 10_000 },
  stallAfterAttempts: {
    kind: 'custom',
    expected: 'a positive integer, or Infinity to retry without end',
    check: (value) =>
      value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && (value as number) >= 1),
  },
  waitBoundMs: {
    kind: 'custom',
    expected: 'a positive number of milliseconds, or Infinity',
    check: (value) => typeof value === 'number' && value > 0,
    default: DEFAULT_WAIT_BOUND_MS,
  },
  clock: { kind: 'object', methods: ['now', 'sleep'], expected: 'a Clock (with now() and sleep())' },
  onEvent: { kind: 'function' },
  keepLog: { kind: 'boolean', default: true },
});

/**
 * Whether the mapping reports batch item failures, from whichever spelling the options use
 * (tidewater's, Lambda's API's or serverless.yml's); spellings that disagree are refused.
 */
export function reportsBatchItemFailures(
  o: Pick<
    EventSourceMappingOptions,
    'reportBatchItemFailures' | 'functionResponseTypes' | 'functionResponseType'
  >,
): boolean {
  const said = [
    o.reportBatchItemFailures,
    o.functionResponseTypes === undefined ? undefined : o.functionResponseTypes.length > 0,
    o.functionResponseType === undefined ? undefined : true,
  ].filter((value) => value !== undefined);
  if (said.some((value) => value !== said[0])) {
    throw new InvalidOptionsError(
      'EventSourceMappingEmulator: reportBatchItemFailures, functionResponseTypes and functionResponseType disagree: give one',
      { option: 'reportBatchItemFailures' },
    );
  }
  return said[0] ?? false;
}
