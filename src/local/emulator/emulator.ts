import { randomUUID } from 'node:crypto';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { defineOptions } from '../../core/index.js';
import { compileFilterCriteria, type EventMatcher, type FilterPattern } from '../../filters/index.js';
import type { LambdaStreamEvent, LambdaStreamRecord } from '../../records/index.js';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from '../servers/dynamodb-local.js';
import { type Clock, systemClock } from './clock.js';
import type { FailureCondition, FailureDestination, StreamInvocationRecord } from './destinations.js';
import { EmulatorStoppedError, HandlerTimeoutError, ReplayStalledError } from './errors.js';
import { createLambdaContext } from './lambda-context.js';

/** What a handler may return: a partial batch response, or nothing. */
// biome-ignore lint/suspicious/noConfusingVoidType: handlers written `async () => {}` return Promise<void>, as Lambda handlers do.
export type StreamHandlerResult = DynamoDBBatchResponse | undefined | void;

/**
 * A Lambda handler for a DynamoDB stream: what `createStreamHandler` returns, a middy handler, or a
 * plain function typed with aws-lambda's `DynamoDBStreamEvent` or tidewater's `LambdaStreamEvent`
 * (one event, two spellings of its AttributeValue). The rest parameter admits handlers that declare
 * more parameters than Lambda passes (middy's takes a third, optional at run time).
 */
export type StreamHandler = (
  event: StreamHandlerEvent,
  context: Context,
  // biome-ignore lint/suspicious/noExplicitAny: any handler arity must be assignable; Lambda passes two arguments.
  ...rest: any[]
) => Promise<StreamHandlerResult> | StreamHandlerResult;

/** The event the emulator passes: assignable to both spellings, so either kind of handler fits. */
export type StreamHandlerEvent = LambdaStreamEvent & DynamoDBStreamEvent;

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
  /** FunctionResponseTypes: ['ReportBatchItemFailures']. */
  reportBatchItemFailures?: boolean;
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

const readOptions = defineOptions<EventSourceMappingOptions>()('EventSourceMappingEmulator', {
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
  reportBatchItemFailures: { kind: 'boolean', default: false },
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
  clock: { kind: 'object', methods: ['now', 'sleep'], expected: 'a Clock (with now() and sleep())' },
  onEvent: { kind: 'function' },
  keepLog: { kind: 'boolean', default: true },
});

export type InvocationOutcome =
  | 'success'
  | 'partial-failure'
  | 'function-error'
  | 'timeout'
  | 'invalid-response';

/** What Lambda would do, step by step. */
export type EmulatorEvent =
  | {
      type: 'invoke';
      shardId: string;
      lane: number;
      requestId: string;
      attempt: number;
      sequenceNumbers: string[];
    }
  | {
      type: 'response';
      shardId: string;
      lane: number;
      requestId: string;
      outcome: InvocationOutcome;
      /** partial-failure: the lowest failed sequence number (the new checkpoint's successor). */
      failedSequenceNumber?: string;
      error?: string;
    }
  | { type: 'filtered'; shardId: string; sequenceNumber: string }
  | { type: 'bisect'; shardId: string; lane: number; sizes: [number, number] }
  | { type: 'retry'; shardId: string; lane: number; retry: number; firstSequenceNumber: string; size: number }
  | {
      type: 'discard';
      shardId: string;
      lane: number;
      condition: FailureCondition;
      record: StreamInvocationRecord;
    }
  | { type: 'checkpoint'; shardId: string; sequenceNumber: string };

export interface ShardInput {
  shardId: string;
  streamArn: string;
  /** Pages of records in shard order (e.g. one per GetRecords call). An empty page lets batching windows close. */
  pages: AsyncIterable<LambdaStreamRecord[]> | Iterable<LambdaStreamRecord[]>;
  /** Called whenever every record up to `sequenceNumber` has been handled (processed, filtered or discarded). */
  onCheckpoint?: (sequenceNumber: string) => void | Promise<void>;
}

export interface ShardResult {
  shardId: string;
  /** The last sequence number handled; undefined when no record arrived. */
  checkpoint: string | undefined;
  records: number;
  filtered: number;
  discarded: number;
  invocations: number;
}

interface Entry {
  record: LambdaStreamRecord;
  seq: bigint;
  done: boolean;
}

interface ShardState {
  shardId: string;
  streamArn: string;
  entries: Entry[];
  head: number;
  checkpoint: string | undefined;
  result: ShardResult;
  /** Set by the first batch that could not be settled: no lane invokes anything after it. */
  failed: boolean;
  onCheckpoint: ((sequenceNumber: string) => void | Promise<void>) | undefined;
}

interface Lane {
  index: number;
  buffer: Entry[];
  firstBufferedAt: number;
  tail: Promise<void>;
  failure: unknown;
}

/**
 * Failed invocations in a row, with nothing settled in between, after which unbounded retries end
 * (see `stallAfterAttempts`). Small enough that a poison record stops a replay in seconds, large
 * enough that a handler recovering from a transient failure (a throttled write, a sink restarting)
 * gets through.
 */
export const DEFAULT_STALL_AFTER_ATTEMPTS = 10;

/** One lane's failures since its last progress: what decides that a batch is stuck. */
interface StallWatch {
  /** Failed invocations in a row without progress. */
  attempts: number;
  /** The clock at the last failure or progress: with an age limit, time passing is progress. */
  clock: number;
  lastError: string;
}

/** A timed-out handler call still running past the settle cap (see `timedOutSettleMs`). */
const STILL_RUNNING = Symbol('still-running');

type Attempt =
  | { outcome: 'success' }
  | { outcome: 'partial-failure'; index: number }
  | { outcome: 'function-error' | 'timeout' | 'invalid-response'; error: string };

/**
 * Lambda's DynamoDB Streams event source mapping, locally: the same batching, filtering, retry,
 * bisect, partial-batch, record-age and on-failure rules, applied to records from any source
 * (the stream poller, a replay file, built events). Everything it decides is in `log`.
 */
export class EventSourceMappingEmulator {
  readonly log: EmulatorEvent[] = [];
  readonly functionArn: string;
  private readonly handler: StreamHandler;
  private readonly functionName: string;
  private readonly timeoutMs: number;
  private readonly memorySize: number;
  private readonly batchSize: number;
  private readonly windowMs: number;
  private readonly filter: EventMatcher | undefined;
  private readonly reportFailures: boolean;
  private readonly bisect: boolean;
  private readonly maxRetries: number;
  private readonly maxAgeMs: number;
  private readonly lanes: number;
  private readonly onFailure: FailureDestination | undefined;
  private readonly retryDelayMs: number;
  private readonly timedOutSettleMs: number;
  /** Infinity when retries are bounded or the user asked for endless ones. */
  private readonly stallAfter: number;
  private readonly clock: Clock;
  private readonly onEvent: ((event: EmulatorEvent) => void) | undefined;
  private readonly keepLog: boolean;
  private stopped = false;

  constructor(options: EventSourceMappingOptions) {
    const o = readOptions(options);
    this.handler = o.handler;
    this.functionName = o.functionName;
    this.functionArn = `arn:aws:lambda:${o.region}:${o.accountId}:function:${this.functionName}`;
    this.timeoutMs = o.timeoutSeconds * 1000;
    this.memorySize = o.memorySize;
    this.batchSize = o.batchSize;
    this.windowMs = o.maximumBatchingWindowInSeconds * 1000;
    this.filter = o.filterPatterns?.length ? compileFilterCriteria(o.filterPatterns) : undefined;
    this.reportFailures = o.reportBatchItemFailures;
    this.bisect = o.bisectBatchOnFunctionError;
    this.maxRetries = o.maximumRetryAttempts;
    this.maxAgeMs = o.maximumRecordAgeInSeconds < 0 ? -1 : o.maximumRecordAgeInSeconds * 1000;
    this.lanes = o.parallelizationFactor;
    this.onFailure = o.onFailure;
    this.retryDelayMs = o.retryDelayMs;
    this.timedOutSettleMs = o.timedOutSettleMs;
    this.stallAfter =
      this.maxRetries < 0 ? (o.stallAfterAttempts ?? DEFAULT_STALL_AFTER_ATTEMPTS) : Number.POSITIVE_INFINITY;
    this.clock = o.clock ?? systemClock;
    this.onEvent = o.onEvent;
    this.keepLog = o.keepLog;
  }

  /** Stops retrying: a batch still failing rejects with EmulatorStoppedError. */
  stop(): void {
    this.stopped = true;
  }

  /** Runs one shard's records through the mapping until every one is processed, filtered or discarded. */
  async runShard(input: ShardInput): Promise<ShardResult> {
    const shard: ShardState = {
      shardId: input.shardId,
      streamArn: input.streamArn,
      entries: [],
      head: 0,
      checkpoint: undefined,
      failed: false,
      result: {
        shardId: input.shardId,
        checkpoint: undefined,
        records: 0,
        filtered: 0,
        discarded: 0,
        invocations: 0,
      },
      onCheckpoint: input.onCheckpoint,
    };
    const lanes: Lane[] = Array.from({ length: this.lanes }, (_, index) => ({
      index,
      buffer: [],
      firstBufferedAt: 0,
      tail: Promise.resolve(),
      failure: undefined,
    }));
    for await (const page of input.pages) {
      const now = this.clock.now();
      for (const record of page) {
        const entry: Entry = { record, seq: BigInt(record.dynamodb.SequenceNumber), done: false };
        shard.entries.push(entry);
        shard.result.records++;
        if (this.filter && !this.filter(record)) {
          entry.done = true;
          shard.result.filtered++;
          this.emit({
            type: 'filtered',
            shardId: shard.shardId,
            sequenceNumber: record.dynamodb.SequenceNumber,
          });
          continue;
        }
        const lane = lanes[this.lanes === 1 ? 0 : laneOf(record, this.lanes)] as Lane;
        if (lane.buffer.length === 0) lane.firstBufferedAt = now;
        lane.buffer.push(entry);
      }
      for (const lane of lanes) {
        while (lane.buffer.length >= this.batchSize)
          this.schedule(shard, lane, lane.buffer.splice(0, this.batchSize));
        if (lane.buffer.length > 0 && (this.windowMs === 0 || now - lane.firstBufferedAt >= this.windowMs)) {
          this.schedule(shard, lane, lane.buffer.splice(0));
        }
      }
      await this.settle(shard, lanes);
    }
    for (const lane of lanes) if (lane.buffer.length > 0) this.schedule(shard, lane, lane.buffer.splice(0));
    await this.settle(shard, lanes);
    shard.result.checkpoint = shard.checkpoint;
    return shard.result;
  }

  /** Convenience for one batch of records (a Lambda event, a replayed page). */
  runRecords(
    records: LambdaStreamRecord[],
    shardId = 'shardId-local-0',
    streamArn?: string,
  ): Promise<ShardResult> {
    return this.runShard({
      shardId,
      streamArn: streamArn ?? records[0]?.eventSourceARN ?? '',
      pages: [records],
    });
  }

  private schedule(shard: ShardState, lane: Lane, batch: Entry[]): void {
    // Lambda never invokes the next batch before the previous one is settled (processed or sent
    // to the destination): once a batch could not be settled, nothing after it runs.
    lane.tail = lane.tail.then(() =>
      shard.failed
        ? undefined
        : this.processBatch(shard, lane, batch).catch((error: unknown) => {
            lane.failure ??= error;
            shard.failed = true;
          }),
    );
  }

  private async settle(shard: ShardState, lanes: Lane[]): Promise<void> {
    await Promise.all(lanes.map((lane) => lane.tail));
    const failure = lanes.find((lane) => lane.failure !== undefined)?.failure;
    // Records settled before the failure stay settled, as Lambda's checkpoint does: a restart
    // from the checkpoint must not redeliver them.
    if (failure !== undefined) {
      await this.advanceCheckpoint(shard).catch(() => undefined);
      throw failure;
    }
    await this.advanceCheckpoint(shard);
  }

  private async processBatch(shard: ShardState, lane: Lane, entries: Entry[]): Promise<void> {
    const pending: Entry[][] = [entries];
    // Spans the bisected halves: a half is progress only when it settles records, not by being new.
    const stall: StallWatch = { attempts: 0, clock: this.clock.now(), lastError: '' };
    while (pending.length > 0) {
      let batch = pending.shift() as Entry[];
      let retries = 0;
      let invocations = 0;
      while (batch.length > 0) {
        // Another lane's batch could not be settled: the shard stops here, as the whole mapping would.
        if (shard.failed) return;
        if (this.stopped) throw new EmulatorStoppedError(batch[0]?.record.dynamodb.SequenceNumber);
        if (this.maxAgeMs >= 0) {
          const kept = await this.discardExpired(shard, lane, batch, invocations);
          if (kept.length !== batch.length) {
            await this.advanceCheckpoint(shard);
            this.progressed(stall);
          }
          batch = kept;
          if (batch.length === 0) break;
        }
        const attempt = await this.invoke(shard, lane, batch, retries + 1);
        invocations++;
        shard.result.invocations++;
        if (attempt.outcome === 'success') {
          markDone(batch);
          this.progressed(stall);
          break;
        }
        if (attempt.outcome === 'partial-failure' && attempt.index > 0) this.progressed(stall);
        else this.failedWithoutProgress(stall, attempt, batch);
        if (attempt.outcome === 'partial-failure') {
          markDone(batch.slice(0, attempt.index));
          batch = batch.slice(attempt.index);
          // Lambda checkpoints at the lowest failed record now, not when the retries end: a
          // restart meanwhile redelivers from the failed record, never the records before it.
          await this.advanceCheckpoint(shard);
        } else if (this.bisect && batch.length > 1) {
          // Halves are retried in order; splitting is how Lambda isolates the bad record, so it does
          // not use up a retry attempt (only a batch that can no longer be split does).
          const middle = Math.ceil(batch.length / 2);
          const first = batch.slice(0, middle);
          const second = batch.slice(middle);
          this.emit({
            type: 'bisect',
            shardId: shard.shardId,
            lane: lane.index,
            sizes: [first.length, second.length],
          });
          pending.unshift(first, second);
          break;
        }
        retries++;
        if (this.maxRetries >= 0 && retries > this.maxRetries) {
          const functionError =
            attempt.outcome === 'function-error' || attempt.outcome === 'timeout' ? 'Unhandled' : undefined;
          await this.discard(shard, lane, batch, 'RetryAttemptsExhausted', invocations, functionError, true);
          break;
        }
        // Checked only where the same batch would be invoked again: bisecting ends by itself.
        if (stall.attempts >= this.stallAfter) {
          throw new ReplayStalledError({
            shardId: shard.shardId,
            sequenceNumbers: batch.map((e) => e.record.dynamodb.SequenceNumber),
            eventIds: batch.map((e) => e.record.eventID),
            attempts: stall.attempts,
            lastError: stall.lastError,
            checkpoint: shard.checkpoint,
            ...(this.maxAgeMs >= 0 ? { maximumRecordAgeInSeconds: this.maxAgeMs / 1000 } : {}),
          });
        }
        const first = batch[0] as Entry;
        this.emit({
          type: 'retry',
          shardId: shard.shardId,
          lane: lane.index,
          retry: retries,
          firstSequenceNumber: first.record.dynamodb.SequenceNumber,
          size: batch.length,
        });
        if (this.retryDelayMs > 0) await this.clock.sleep(this.retryDelayMs);
        // A handler that fails without I/O settles in microtasks only (and a ManualClock sleeps
        // in none): without a turn of the event loop, endless retries would starve timers,
        // abort signals and any server in this process, so stop() could never arrive.
        await new Promise((resolve) => setImmediate(resolve));
      }
      await this.advanceCheckpoint(shard);
    }
  }

  /** A record of this lane was checkpointed or discarded: whatever failed before is not stuck. */
  private progressed(stall: StallWatch): void {
    stall.attempts = 0;
    stall.clock = this.clock.now();
  }

  private failedWithoutProgress(stall: StallWatch, attempt: Attempt, batch: Entry[]): void {
    stall.lastError =
      attempt.outcome === 'partial-failure'
        ? `batchItemFailures reported ${(batch[attempt.index] as Entry).record.dynamodb.SequenceNumber} as failed`
        : 'error' in attempt
          ? attempt.error
          : attempt.outcome;
    const now = this.clock.now();
    // With an age limit, a clock that moves (on its own, or by the retry delay) will reach it and
    // the records will be discarded, as Lambda discards them: not stuck. A clock that stands still
    // (a replay's, without retryDelayMs) never gets there.
    const ageApproaching = this.maxAgeMs >= 0 && (now !== stall.clock || this.retryDelayMs > 0);
    stall.attempts = ageApproaching ? 0 : stall.attempts + 1;
    stall.clock = now;
  }

  private async discardExpired(
    shard: ShardState,
    lane: Lane,
    batch: Entry[],
    invocations: number,
  ): Promise<Entry[]> {
    const oldest = this.clock.now() - this.maxAgeMs;
    let expired: Entry[] | undefined;
    let kept: Entry[] | undefined;
    for (let i = 0; i < batch.length; i++) {
      const entry = batch[i] as Entry;
      const created = entry.record.dynamodb.ApproximateCreationDateTime;
      const isExpired = created !== undefined && created * 1000 < oldest;
      if (isExpired && !expired) {
        expired = [];
        kept = batch.slice(0, i);
      }
      if (isExpired) expired?.push(entry);
      else kept?.push(entry);
    }
    if (!expired || !kept) return batch;
    await this.discard(shard, lane, expired, 'RecordAgeExceeded', invocations, undefined, invocations > 0);
    return kept;
  }

  private async discard(
    shard: ShardState,
    lane: Lane,
    batch: Entry[],
    condition: FailureCondition,
    invocations: number,
    functionError: string | undefined,
    invoked: boolean,
  ): Promise<void> {
    const first = (batch[0] as Entry).record;
    const last = (batch[batch.length - 1] as Entry).record;
    const record: StreamInvocationRecord = {
      requestContext: {
        requestId: randomUUID(),
        functionArn: this.functionArn,
        condition,
        approximateInvokeCount: invocations,
      },
      ...(invoked
        ? {
            responseContext: {
              statusCode: 200,
              executedVersion: '$LATEST',
              ...(functionError ? { functionError } : {}),
            },
          }
        : {}),
      version: '1.0',
      timestamp: new Date(this.clock.now()).toISOString(),
      DDBStreamBatchInfo: {
        shardId: shard.shardId,
        startSequenceNumber: first.dynamodb.SequenceNumber,
        endSequenceNumber: last.dynamodb.SequenceNumber,
        approximateArrivalOfFirstRecord: arrival(first),
        approximateArrivalOfLastRecord: arrival(last),
        batchSize: batch.length,
        streamArn: shard.streamArn,
      },
    };
    if (this.onFailure)
      await this.onFailure.send(
        record,
        batch.map((e) => e.record),
      );
    markDone(batch);
    shard.result.discarded += batch.length;
    this.emit({ type: 'discard', shardId: shard.shardId, lane: lane.index, condition, record });
  }

  private async invoke(shard: ShardState, lane: Lane, batch: Entry[], attempt: number): Promise<Attempt> {
    const requestId = randomUUID();
    const records = batch.map((e) => e.record);
    this.emit({
      type: 'invoke',
      shardId: shard.shardId,
      lane: lane.index,
      requestId,
      attempt,
      sequenceNumbers: records.map((r) => r.dynamodb.SequenceNumber),
    });
    const context = createLambdaContext({
      functionName: this.functionName,
      functionArn: this.functionArn,
      timeoutMs: this.timeoutMs,
      memoryLimitInMB: this.memorySize,
      awsRequestId: requestId,
    });
    const result = await this.call({ Records: records }, context, records[0]?.dynamodb.SequenceNumber ?? '');
    const outcome = 'error' in result ? result : this.judge(result.value, batch);
    this.emit({
      type: 'response',
      shardId: shard.shardId,
      lane: lane.index,
      requestId,
      outcome: outcome.outcome,
      ...(outcome.outcome === 'partial-failure'
        ? { failedSequenceNumber: (batch[outcome.index] as Entry).record.dynamodb.SequenceNumber }
        : {}),
      ...('error' in outcome ? { error: outcome.error } : {}),
    });
    return outcome;
  }

  private async call(
    event: LambdaStreamEvent,
    context: Context,
    firstSequenceNumber: string,
  ): Promise<{ value: unknown } | { outcome: 'function-error' | 'timeout'; error: string }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new HandlerTimeoutError(this.timeoutMs, firstSequenceNumber)),
        this.timeoutMs,
      );
    });
    // Lambda's JSON is both spellings at once; only the static types differ.
    const running = Promise.resolve().then(() => this.handler(event as StreamHandlerEvent, context));
    try {
      const value = await Promise.race([running, timeout]);
      return { value };
    } catch (error) {
      if (error instanceof HandlerTimeoutError) {
        const settled = await this.settleTimedOut(running);
        return {
          outcome: 'timeout',
          error: settled
            ? error.message
            : `${error.message}; still running after ${this.timedOutSettleMs} ms more, the retry overlaps it`,
        };
      }
      return {
        outcome: 'function-error',
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits (capped) for an abandoned call to finish; false when it is still running at the cap. */
  private async settleTimedOut(running: Promise<unknown>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<typeof STILL_RUNNING>((resolve) => {
      timer = setTimeout(() => resolve(STILL_RUNNING), this.timedOutSettleMs);
    });
    try {
      const outcome = await Promise.race([
        running.then(
          () => undefined,
          () => undefined,
        ),
        cap,
      ]);
      return outcome !== STILL_RUNNING;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Lambda's reading of a handler's return value (partial batch response rules). */
  private judge(value: unknown, batch: Entry[]): Attempt {
    if (!this.reportFailures || value === null || value === undefined || typeof value !== 'object')
      return { outcome: 'success' };
    const failures = (value as { batchItemFailures?: unknown }).batchItemFailures;
    if (failures === undefined || failures === null) return { outcome: 'success' };
    if (!Array.isArray(failures)) return invalid('batchItemFailures is not an array');
    if (failures.length === 0) return { outcome: 'success' };
    let lowest = -1;
    for (const failure of failures) {
      if (failure === null || typeof failure !== 'object')
        return invalid('a batchItemFailures entry is not an object');
      const id = (failure as { itemIdentifier?: unknown }).itemIdentifier;
      if (typeof id !== 'string' || id === '')
        return invalid(`itemIdentifier ${JSON.stringify(id)} is empty or missing`);
      const index = indexOfSequence(batch, id);
      if (index < 0)
        return invalid(`itemIdentifier ${JSON.stringify(id)} is not a sequence number in the batch`);
      if (lowest < 0 || index < lowest) lowest = index;
    }
    return { outcome: 'partial-failure', index: lowest };
  }

  private async advanceCheckpoint(shard: ShardState): Promise<void> {
    const entries = shard.entries;
    let head = shard.head;
    while (head < entries.length && (entries[head] as Entry).done) head++;
    if (head === shard.head) return;
    const sequenceNumber = (entries[head - 1] as Entry).record.dynamodb.SequenceNumber;
    if (head > 4096) {
      entries.splice(0, head);
      head = 0;
    }
    shard.head = head;
    shard.checkpoint = sequenceNumber;
    this.emit({ type: 'checkpoint', shardId: shard.shardId, sequenceNumber });
    if (shard.onCheckpoint) await shard.onCheckpoint(sequenceNumber);
  }

  private emit(event: EmulatorEvent): void {
    if (this.keepLog) this.log.push(event);
    this.onEvent?.(event);
  }
}

function invalid(error: string): Attempt {
  return { outcome: 'invalid-response', error };
}

function markDone(batch: Entry[]): void {
  for (const entry of batch) entry.done = true;
}

function indexOfSequence(batch: Entry[], id: string): number {
  let seq: bigint;
  try {
    seq = BigInt(id);
  } catch {
    return -1;
  }
  for (let i = 0; i < batch.length; i++) if ((batch[i] as Entry).seq === seq) return i;
  return -1;
}

/** Whole seconds, as in Lambda's invocation records (`2019-11-14T00:13:19Z`); the stream's clock has no more. */
function arrival(record: LambdaStreamRecord): string {
  const created = record.dynamodb.ApproximateCreationDateTime;
  return new Date(Math.floor(created ?? 0) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Records of one item (same key) always land in the same lane, so per-item order holds. */
function laneOf(record: LambdaStreamRecord, lanes: number): number {
  const keys = record.dynamodb.Keys;
  let hash = 0x811c9dc5;
  const names = Object.keys(keys).sort();
  for (const name of names) {
    const text = `${name}=${JSON.stringify(keys[name])};`;
    for (let i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
  }
  return (hash >>> 0) % lanes;
}
