import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { defineOptions } from '../core/options.js';
import { TTL_HEURISTIC_OPTION } from '../records/classify.js';
import { MalformedRecordError } from '../records/errors.js';
import { NUMBERS_OPTION } from '../records/numbers.js';
import {
  createStreamRecordParser,
  eventRecordsOf,
  type ParseOptions,
  type RecordParser,
} from '../records/parse.js';
import { type ClassifiedRecord, RECORD_KINDS, type RecordKind } from '../records/types.js';
import type { DeadLetterEntry, DeadLetterSink } from '../sinks/types.js';
import type { RecordPredicate, RouteCondition } from './config.js';
import type { OrderedBatch } from './kinesis-order.js';
import type { KinesisSource, StreamSource } from './kinesis-source.js';
import { SOURCE_OPTION } from './source-option.js';
import { NotAWindowEventError, WindowStateTooLargeError } from './window-errors.js';
import {
  type TimeWindowEvent,
  type TimeWindowResponse,
  WINDOW_STATE_LIMIT_BYTES,
  windowStateBytes,
} from './window-event.js';

/** The window an invocation belongs to, as the reducer and `onWindowEnd` see it. */
export interface WindowInfo {
  /** ISO-8601 UTC, to the second, as Lambda writes them. */
  readonly start: string;
  readonly end: string;
  readonly shardId: string;
  readonly eventSourceARN: string;
  /**
   * Lambda ended the window before its end: the rest of the window arrives as a new segment that
   * starts again from `initial()` and ends with its own `onWindowEnd`.
   */
  readonly terminatedEarly: boolean;
  /**
   * The first and last record that reached this state. With `shardId` they name this segment of
   * the window: the key that lets `onWindowEnd` write its result once, however often Lambda
   * retries the final invocation. Undefined when no record reached it.
   */
  readonly firstSequenceNumber: string | undefined;
  readonly lastSequenceNumber: string | undefined;
}

/** Configuration of createWindowHandler: the state, the reducer and what a window's end does. */
export interface WindowHandlerConfig<State> {
  /** The state a window starts from (a new window, or the rest of one Lambda ended early). */
  initial: () => State;
  /** Which records reach `reduce`: a kind, kinds, or a predicate (`matching(pattern)`). Default every record. */
  when?: RouteCondition;
  /**
   * Folds a batch's records (parsed, classified, in stream order) into the state. Return the new
   * state; it must be JSON (Lambda stores it between invocations) and stay under 1 MB. A throw
   * fails the batch: Lambda retries it with the state from before it.
   */
  reduce: (state: State, records: readonly ClassifiedRecord[], window: WindowInfo) => State | Promise<State>;
  /**
   * The window's final invocation, once its end has passed: write the result. Lambda retries the
   * final invocation until it succeeds, so make the write idempotent (see `WindowInfo`).
   */
  onWindowEnd: (state: State, window: WindowInfo, context: Context) => unknown;
  /**
   * Where malformed records go (reason `malformed`); they reach neither `reduce` nor the state.
   * Without one, a malformed record fails the batch, and Lambda's retry policy (bisecting, the
   * on-failure destination) decides its fate.
   */
  deadLetter?: DeadLetterSink;
  /** How `N` values unmarshal and the TTL heuristic. Keys and images are validated up front. */
  parse?: Pick<ParseOptions, 'numbers' | 'ttlHeuristic'>;
  /**
   * The event source: a DynamoDB stream (default) or a Kinesis data stream fed by the table,
   * `kinesisSource()`, as the stream handler's `source`; a Kinesis batch is de-duplicated and put
   * in per-item creation-time order before `reduce` sees it.
   */
  source?: StreamSource;
  /** Epoch milliseconds, for dead-letter timestamps; for tests. Default Date.now. */
  clock?: () => number;
}

/**
 * The state as it travels through Lambda (what the handler returns as `state` and gets back): the
 * reducer's value and the first / last record of the window's segment.
 */
export interface WindowHandlerState<State> {
  value?: State;
  first?: string;
  last?: string;
}

const readConfig = /* @__PURE__ */ defineOptions<WindowHandlerConfig<unknown>>()('createWindowHandler', {
  initial: { kind: 'function', required: true },
  when: { kind: 'custom', expected: 'a kind, a non-empty list of kinds or a predicate', check: isCondition },
  reduce: { kind: 'function', required: true },
  onWindowEnd: { kind: 'function', required: true },
  deadLetter: { kind: 'object', methods: ['send'], expected: 'a dead-letter sink (an object with send())' },
  parse: { kind: 'object', expected: 'parse options ({ numbers, ttlHeuristic })' },
  source: SOURCE_OPTION,
  clock: { kind: 'function', default: Date.now },
});

const readParse = /* @__PURE__ */ defineOptions<NonNullable<WindowHandlerConfig<unknown>['parse']>>()(
  'createWindowHandler',
  { numbers: NUMBERS_OPTION, ttlHeuristic: TTL_HEURISTIC_OPTION },
);

const KINDS: ReadonlySet<string> = new Set<RecordKind>(RECORD_KINDS);

function isCondition(when: unknown): boolean {
  if (typeof when === 'function' || (typeof when === 'string' && KINDS.has(when))) return true;
  return Array.isArray(when) && when.length > 0 && when.every((kind) => KINDS.has(kind));
}

/** The records a `when` takes; undefined for every record. */
function predicateOf(when: RouteCondition | undefined): RecordPredicate | undefined {
  if (when === undefined) return undefined;
  if (typeof when === 'function') return when as RecordPredicate;
  const kinds: ReadonlySet<string> = new Set(typeof when === 'string' ? [when] : when);
  return (record) => kinds.has(record.kind);
}

/**
 * A Lambda handler for a DynamoDB stream with a tumbling window (`tumblingWindowInSeconds` on the
 * stream event): each invocation folds its records into the window's state with `reduce`, Lambda
 * carries the state to the next invocation of the window, and the window's final invocation hands
 * it to `onWindowEnd`. Records are parsed and classified as the stream handler does; malformed
 * ones go to `deadLetter`. Already wrapped by middy (`.use()` more middlewares).
 */
export function createWindowHandler<State>(config: WindowHandlerConfig<State>) {
  const o = readConfig(config as WindowHandlerConfig<unknown>);
  // Checked above; taken from the config itself to keep their State-typed signatures.
  const { initial, reduce, onWindowEnd } = config;
  const parseOptions = { ...readParse(o.parse ?? {}), validate: true };
  const source = o.source as StreamSource;
  const parsers: Parsers = {
    stream: createStreamRecordParser(parseOptions),
    kinesis: source === 'dynamodb-stream' ? undefined : { source, parse: source.parser(parseOptions) },
  };
  const takes = predicateOf(o.when as RouteCondition | undefined);
  const clock = o.clock as () => number;

  return middy<TimeWindowEvent, TimeWindowResponse<WindowHandlerState<State>>, Error, Context>().handler(
    async (event, context) => {
      checkWindowEvent(event);
      const wire = wireStateOf<State>(event.state);
      let state = 'value' in wire ? (wire.value as State) : initial();
      let first = wire.first;
      let last = wire.last;
      const taken: ClassifiedRecord[] = [];
      let batchFirst: ClassifiedRecord | undefined;
      const malformed: DeadLetterEntry[] = [];
      const batch = readBatch(event, parsers);
      for (let i = 0; i < batch.raws.length; i++) {
        const record = batch.records[i];
        if (record === undefined) {
          const error = batch.errors![i];
          if (!(error instanceof MalformedRecordError) || !o.deadLetter) throw error;
          malformed.push(malformedEntry(batch.raws[i], error, clock()));
          first ??= error.sequenceNumber;
          last = error.sequenceNumber ?? last;
          continue;
        }
        batchFirst ??= record;
        first ??= record.sequenceNumber;
        last = record.sequenceNumber;
        if (takes === undefined || takes(record)) taken.push(record);
      }
      if (malformed.length > 0) await o.deadLetter?.send(malformed, {});
      const window: WindowInfo = {
        start: event.window.start,
        end: event.window.end,
        shardId: event.shardId,
        eventSourceARN: event.eventSourceARN,
        terminatedEarly: event.isWindowTerminatedEarly === true,
        firstSequenceNumber: first,
        lastSequenceNumber: last,
      };
      if (taken.length > 0) state = await reduce(state, taken, window);
      const next: WindowHandlerState<State> = {
        value: state,
        ...(first === undefined ? {} : { first }),
        ...(last === undefined ? {} : { last }),
      };
      if (event.isFinalInvokeForWindow) {
        await onWindowEnd(state, window, context);
        return { state: next };
      }
      const bytes = windowStateBytes(next);
      if (bytes > WINDOW_STATE_LIMIT_BYTES) {
        throw new WindowStateTooLargeError(
          { bytes, limitBytes: WINDOW_STATE_LIMIT_BYTES, windowStart: window.start, shardId: window.shardId },
          { eventID: batchFirst?.eventID, sequenceNumber: batchFirst?.sequenceNumber },
        );
      }
      return { state: next };
    },
  );
}

interface Parsers {
  readonly stream: RecordParser;
  readonly kinesis: { readonly source: KinesisSource; readonly parse: RecordParser } | undefined;
}

/** The batch's records parsed (errors kept per record); a Kinesis batch ordered and de-duplicated. */
function readBatch(event: unknown, parsers: Parsers): Pick<OrderedBatch, 'raws' | 'records' | 'errors'> {
  const { kinesis } = parsers;
  const { records: raws, source } = eventRecordsOf(
    event,
    kinesis === undefined ? 'dynamodb-stream' : kinesis.source.expected,
  );
  // eventRecordsOf says 'kinesis' only when the handler has the Kinesis stage.
  const fromKinesis = source === 'kinesis' ? kinesis : undefined;
  const parse = fromKinesis === undefined ? parsers.stream : fromKinesis.parse;
  const records = new Array<ClassifiedRecord | undefined>(raws.length);
  let errors: unknown[] | undefined;
  for (let i = 0; i < raws.length; i++) {
    try {
      records[i] = parse(raws[i]);
    } catch (error) {
      errors ??= new Array<unknown>(raws.length);
      errors[i] = error;
    }
  }
  return fromKinesis === undefined
    ? { raws, records, errors }
    : fromKinesis.source.order(raws, { records, errors });
}

function checkWindowEvent(event: unknown): asserts event is TimeWindowEvent {
  if (event === null || typeof event !== 'object')
    throw new NotAWindowEventError('the event is not an object');
  const e = event as Partial<TimeWindowEvent>;
  if (e.window === undefined || typeof e.isFinalInvokeForWindow !== 'boolean')
    throw new NotAWindowEventError('the event has no window and no isFinalInvokeForWindow');
  if (typeof e.window?.start !== 'string' || typeof e.window.end !== 'string')
    throw new NotAWindowEventError(`the event's window is ${JSON.stringify(e.window)}, not { start, end }`);
}

/** Lambda opens a window with `{}`; a state this handler returned carries `value`. */
function wireStateOf<State>(state: unknown): WindowHandlerState<State> {
  return state !== null && typeof state === 'object' && !Array.isArray(state)
    ? (state as WindowHandlerState<State>)
    : {};
}

function malformedEntry(raw: unknown, error: MalformedRecordError, now: number): DeadLetterEntry {
  const arn = (raw as { eventSourceARN?: unknown } | null)?.eventSourceARN;
  return {
    reason: 'malformed',
    record: raw,
    eventID: error.eventID,
    sequenceNumber: error.sequenceNumber,
    eventSourceARN: typeof arn === 'string' ? arn : undefined,
    error: { name: error.name, message: error.message },
    attempts: 1,
    at: new Date(now).toISOString(),
  };
}
