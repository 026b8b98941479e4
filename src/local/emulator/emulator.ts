import { randomUUID } from 'node:crypto';
import { failureCauseOf } from '../../core/failure-cause.js';
import {
  compileFilterCriteria,
  type EventMatcher,
  FilterCriteriaError,
  type FilterPattern,
  MAX_FILTERS_QUOTA,
  patternWarnings,
} from '../../filters/index.js';
import { emitFilterWarning } from '../../filters/lint.js';
import { createLambdaContext, lambdaFunctionArn } from '../../lambda/context.js';
import { judgeResponse } from '../../lambda/stream-response.js';
import type { LambdaStreamRecord } from '../../records/index.js';
import { type Clock, systemClock } from './clock.js';
import type { FailureCondition, FailureDestination } from './destinations.js';
import type { EmulatorEvent, ShardResult } from './emulator-log.js';
import { EmulatorStoppedError } from './errors.js';
import { callHandler } from './handler-call.js';
import { mappingInvocationRecord } from './invocation-record.js';
import {
  type EventSourceMappingOptions,
  readMappingOptions,
  reportsBatchItemFailures,
  type StreamHandler,
} from './mapping-options.js';
import { EVENT_ENVELOPE_BYTES, INVOCATION_PAYLOAD_LIMIT_BYTES, recordPayloadBytes } from './payload-limit.js';
import { splitExpired, trimmedAtMs } from './record-age.js';
import { DYNAMODB_SOURCE, type RecordSource } from './record-source.js';
import {
  type Attempt,
  attemptError,
  type Entry,
  type Lane,
  type ShardState,
  type WindowCall,
} from './shard-state.js';
import { DEFAULT_STALL_AFTER_ATTEMPTS, type StallPolicy, StallWatch } from './stall-watchdog.js';
import { isoSecond, windowEvent } from './tumbling-window.js';
import { boundedPages, withinBound } from './wait-bound.js';
import { WindowLifecycle } from './window-lifecycle.js';

export type { EmulatorEvent, InvocationOutcome, ShardResult } from './emulator-log.js';
export type {
  EventSourceMappingOptions,
  StreamHandler,
  StreamHandlerEvent,
  StreamHandlerResult,
} from './mapping-options.js';
export { DEFAULT_STALL_AFTER_ATTEMPTS } from './stall-watchdog.js';

/** One shard's records as the emulator takes them: pages in shard order. */
export interface ShardInput<R = LambdaStreamRecord> {
  shardId: string;
  streamArn: string;
  /** Pages of records in shard order (e.g. one per GetRecords call). An empty page lets batching windows close. */
  pages: AsyncIterable<R[]> | Iterable<R[]>;
  /** Called whenever every record up to `sequenceNumber` has been handled (processed, filtered or discarded). */
  onCheckpoint?: (sequenceNumber: string) => void | Promise<void>;
  /**
   * Called after the last page: whether the pages ended because the shard did (it was closed),
   * not because its reader stopped (caught up, aborted). "When the shard ends, Lambda considers the
   * window closed": only then does an open tumbling window get its final invocation; a reader that
   * stopped leaves its records after the checkpoint for the next run. Default: the pages are the
   * whole shard.
   */
  shardEnded?: () => boolean;
}

/** The mapping's settings with the handler its source's events go to. */
export type MappingOptions<H> = Omit<EventSourceMappingOptions, 'handler'> & { handler: H };

/**
 * Lambda's event source mapping for a stream, locally: batching, filtering, retry, bisect,
 * partial-batch, record-age, tumbling-window and on-failure rules, applied to the records of one
 * source (`RecordSource`: a DynamoDB stream or a Kinesis stream), from whatever reads them (a
 * poller, a replay file, built events). Everything it decides is in `log`.
 */
export class MappingEmulator<R> {
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
  private readonly waitBoundMs: number;
  private stopped = false;
  private readonly windows: WindowLifecycle;
  private readonly stallPolicy: StallPolicy;

  constructor(
    options: MappingOptions<unknown>,
    private readonly source: RecordSource<R>,
  ) {
    const o = readMappingOptions(options as EventSourceMappingOptions);
    this.handler = o.handler;
    this.functionName = o.functionName;
    this.functionArn = lambdaFunctionArn(o.region, o.accountId, this.functionName);
    this.timeoutMs = o.timeoutSeconds * 1000;
    this.memorySize = o.memorySize;
    this.batchSize = o.batchSize;
    this.windowMs = o.maximumBatchingWindowInSeconds * 1000;
    this.filter = compileFilters(o.filterPatterns ?? [], o.maxFilters);
    this.reportFailures = reportsBatchItemFailures(o);
    this.bisect = o.bisectBatchOnFunctionError;
    this.maxRetries = o.maximumRetryAttempts;
    this.maxAgeMs = o.maximumRecordAgeInSeconds < 0 ? -1 : o.maximumRecordAgeInSeconds * 1000;
    const tumblingMs = o.tumblingWindowInSeconds * 1000;
    // A window's state is per shard ("1 MB per shard"), so a windowed shard runs one batch at a time.
    this.lanes = tumblingMs > 0 ? 1 : o.parallelizationFactor;
    this.onFailure = o.onFailure;
    this.retryDelayMs = o.retryDelayMs;
    this.timedOutSettleMs = o.timedOutSettleMs;
    const finalStallAfter = o.stallAfterAttempts ?? DEFAULT_STALL_AFTER_ATTEMPTS;
    this.stallAfter = this.maxRetries < 0 ? finalStallAfter : Number.POSITIVE_INFINITY;
    this.clock = o.clock ?? systemClock;
    this.onEvent = o.onEvent;
    this.keepLog = o.keepLog;
    this.stallPolicy = { clock: this.clock, maxAgeMs: this.maxAgeMs, retryDelayMs: this.retryDelayMs };
    this.windows = new WindowLifecycle(tumblingMs, finalStallAfter, this.stallPolicy, {
      flush: (shard, lane) => this.flush(shard, lane),
      schedule: (shard, lane, task) => this.schedule(shard, lane, task),
      invoke: (shard, lane, batch, attempt, window) => this.invoke(shard, lane, batch, attempt, window),
      advanceCheckpoint: (shard) => this.advanceCheckpoint(shard),
      emit: (event) => this.emit(event),
      pauseBeforeRetry: () => this.pauseBeforeRetry(),
      stopped: () => this.stopped,
    });
    this.waitBoundMs = o.waitBoundMs;
  }

  /** Stops retrying: a batch still failing rejects with EmulatorStoppedError. */
  stop(): void {
    this.stopped = true;
  }

  /** Runs one shard's records through the mapping until every one is processed, filtered or discarded. */
  async runShard(input: ShardInput<R>): Promise<ShardResult> {
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
        expired: 0,
        invocations: 0,
      },
      onCheckpoint: input.onCheckpoint,
      segment: undefined,
      bound: { ms: this.waitBoundMs, shardId: input.shardId, checkpoint: () => shard.checkpoint },
    };
    const lanes: Lane[] = Array.from({ length: this.lanes }, (_, index) => ({
      index,
      buffer: [],
      bufferBytes: 0,
      windowOpenedAt: 0,
      completedAny: false,
      inFlight: 0,
      span: undefined,
      latest: undefined,
      tail: Promise.resolve(),
      failure: undefined,
    }));
    for await (const page of boundedPages(input.pages, shard.bound)) {
      const now = this.clock.now();
      for (const record of page) {
        const { sequenceNumber, eventId } = this.source.identity(record);
        const entry: Entry = {
          record,
          sequenceNumber,
          eventId,
          seq: BigInt(sequenceNumber),
          stampedAtMs: this.source.stampedAtMs(record),
          done: false,
          deliveredAt: undefined,
          span: undefined,
        };
        shard.entries.push(entry);
        shard.result.records++;
        if (this.filter && !this.filter(this.source.filterInput(record))) {
          entry.done = true;
          shard.result.filtered++;
          this.emit({
            type: 'filtered',
            shardId: shard.shardId,
            sequenceNumber,
          });
          continue;
        }
        const lane = lanes[this.lanes === 1 ? 0 : laneOf(this.source.laneKey(record), this.lanes)] as Lane;
        if (this.windows.enabled) this.windows.place(shard, lane, entry, now);
        this.gather(shard, lane, entry, now);
      }
      for (const lane of lanes) {
        if (lane.buffer.length > 0 && this.batchingWindowClosed(lane, now)) this.flush(shard, lane);
        this.windows.closeIfEnded(shard, lane, now);
      }
      await this.settle(shard, lanes);
    }
    const shardEnded = input.shardEnded?.() ?? true;
    for (const lane of lanes) {
      this.flush(shard, lane);
      if (shardEnded) this.windows.close(shard, lane);
    }
    await this.settle(shard, lanes);
    shard.result.checkpoint = shard.checkpoint;
    return shard.result;
  }

  /** Convenience for one batch of records (a Lambda event, a replayed page). */
  runRecords(records: R[], shardId = 'shardId-local-0', streamArn?: string): Promise<ShardResult> {
    return this.runShard({
      shardId,
      streamArn: streamArn ?? (records[0] as { eventSourceARN?: string } | undefined)?.eventSourceARN ?? '',
      pages: [records],
    });
  }

  /**
   * "If you configure a MaximumBatchingWindowInSeconds, the next batching window begins as soon as
   * the previous function invocation completes" (Lambda developer guide, "Lambda event source
   * mappings", batching behavior): while an invocation is still running the window has not begun.
   * The first window begins with the lane's first record. Window 0: as soon as records arrive.
   */
  private batchingWindowClosed(lane: Lane, now: number): boolean {
    if (this.windowMs === 0) return true;
    return lane.inFlight === 0 && now - lane.windowOpenedAt >= this.windowMs;
  }

  /** Adds a record to its lane's next batch; a full batch, or a full 6 MB payload, is invoked. */
  private gather(shard: ShardState, lane: Lane, entry: Entry, now: number): void {
    const bytes = recordPayloadBytes(entry.record, entry);
    // The payload limit cuts the batch before the record that would pass it; a record over the
    // limit on its own (a DynamoDB item is at most 400 KB, so never on AWS) goes alone.
    // recordPayloadBytes counts a comma per record; an event has one fewer than its records.
    if (
      lane.buffer.length > 0 &&
      EVENT_ENVELOPE_BYTES + lane.bufferBytes + bytes - 1 > INVOCATION_PAYLOAD_LIMIT_BYTES
    )
      this.flush(shard, lane);
    if (lane.buffer.length === 0 && !lane.completedAny) lane.windowOpenedAt = now;
    lane.buffer.push(entry);
    lane.bufferBytes += bytes;
    if (lane.buffer.length >= this.batchSize) this.flush(shard, lane);
  }

  private flush(shard: ShardState, lane: Lane): void {
    if (lane.buffer.length === 0) return;
    const batch = lane.buffer;
    lane.buffer = [];
    lane.bufferBytes = 0;
    this.schedule(shard, lane, () => this.processBatch(shard, lane, batch));
  }

  private schedule(shard: ShardState, lane: Lane, task: () => Promise<void>): void {
    // Lambda never invokes the next batch before the previous one is settled (processed or sent
    // to the destination): once a batch could not be settled, nothing after it runs.
    lane.inFlight++;
    lane.tail = lane.tail.then(async () => {
      if (!shard.failed) {
        await task().catch((error: unknown) => {
          lane.failure ??= error;
          shard.failed = true;
        });
      }
      lane.inFlight--;
      lane.completedAny = true;
      lane.windowOpenedAt = this.clock.now();
    });
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
    const stall = new StallWatch(this.stallPolicy);
    while (pending.length > 0) {
      let batch = pending.shift() as Entry[];
      let retries = 0;
      let invocations = 0;
      while (batch.length > 0) {
        // Another lane's batch could not be settled: the shard stops here, as the whole mapping would.
        if (shard.failed) return;
        if (this.stopped) throw new EmulatorStoppedError(batch[0]?.sequenceNumber);
        batch = await this.dropAged(shard, lane, batch, invocations, stall);
        if (batch.length === 0) break;
        const window = this.windows.callFor(shard, batch);
        const attempt = await this.invoke(shard, lane, batch, retries + 1, window);
        invocations++;
        shard.result.invocations++;
        if (attempt.outcome === 'success') {
          await this.windows.settleProcessed(shard, lane, batch, attempt.state);
          stall.progressed();
          break;
        }
        const settledSome = attempt.outcome === 'partial-failure' && attempt.index > 0;
        if (settledSome) stall.progressed();
        else stall.failed(attemptError(attempt, batch), true);
        if (settledSome) {
          // Lambda checkpoints at the lowest failed record now, not when the retries end: a
          // restart meanwhile redelivers from the failed record, never the records before it.
          await this.windows.settleProcessed(shard, lane, batch.slice(0, attempt.index), attempt.state);
          const rest = batch.slice(attempt.index);
          if (this.bisect) {
            // "When a partial batch success response is received and both BisectBatchOnFunctionError
            // and ReportBatchItemFailures are turned on, the batch is bisected at the returned
            // sequence number and Lambda retries only the remaining records" — a split, which does
            // not count towards the retry quota.
            this.emit({
              type: 'bisect',
              shardId: shard.shardId,
              lane: lane.index,
              sizes: [attempt.index, rest.length],
            });
            pending.unshift(rest);
            break;
          }
          batch = rest;
        } else if (this.bisect && batch.length > 1) {
          // "If your invocation fails and BisectBatchOnFunctionError is turned on, the batch is
          // bisected regardless of your ReportBatchItemFailures setting" — a partial response
          // failing at the batch's first record included. Halves are retried in order; splitting
          // is how Lambda isolates the bad record, so it does not use up a retry attempt.
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
          await this.discard(shard, lane, batch, 'RetryAttemptsExhausted', invocations, functionError);
          break;
        }
        // Checked only where the same batch would be invoked again: bisecting ends by itself.
        if (stall.attempts >= this.stallAfter) {
          throw stall.error(shard, batch);
        }
        this.emit({
          type: 'retry',
          shardId: shard.shardId,
          lane: lane.index,
          retry: retries,
          firstSequenceNumber: (batch[0] as Entry).sequenceNumber,
          size: batch.length,
        });
        await this.pauseBeforeRetry();
      }
      await this.advanceCheckpoint(shard);
    }
  }

  private async pauseBeforeRetry(): Promise<void> {
    if (this.retryDelayMs > 0) await this.clock.sleep(this.retryDelayMs);
    // A handler that fails without I/O settles in microtasks only (and a ManualClock sleeps in
    // none): without a turn of the event loop, endless retries would starve timers, abort signals
    // and any server in this process, so stop() could never arrive.
    await new Promise((resolve) => setImmediate(resolve));
  }

  /**
   * Before an invocation: records past `maximumRecordAgeInSeconds` go to the destination, and
   * records retried past the stream's 24-hour retention are gone (see trimmedAtMs). Only a record
   * already delivered expires from the stream: one handed to the mapping was readable when read.
   */
  private async dropAged(
    shard: ShardState,
    lane: Lane,
    batch: Entry[],
    invocations: number,
    stall: StallWatch,
  ): Promise<Entry[]> {
    const now = this.clock.now();
    let kept = batch;
    const oldest = now - this.maxAgeMs;
    const aged =
      this.maxAgeMs >= 0 ? splitExpired(kept, (entry) => (entry.stampedAtMs ?? oldest) < oldest) : undefined;
    if (aged) {
      await this.discard(shard, lane, aged.expired, 'RecordAgeExceeded', invocations, undefined);
      kept = aged.kept;
    }
    const trimmed = splitExpired(
      kept,
      (entry) => entry.deliveredAt !== undefined && now >= trimmedAtMs(entry.stampedAtMs, entry.deliveredAt),
    );
    if (trimmed) {
      await this.expire(shard, lane, trimmed.expired);
      kept = trimmed.kept;
    }
    if (kept !== batch) {
      await this.advanceCheckpoint(shard);
      stall.progressed();
    }
    return kept;
  }

  private async discard(
    shard: ShardState,
    lane: Lane,
    batch: Entry[],
    condition: FailureCondition,
    invocations: number,
    functionError: string | undefined,
  ): Promise<void> {
    const records = batch.map((e) => e.record as R);
    const record = mappingInvocationRecord(
      {
        requestId: randomUUID(),
        functionArn: this.functionArn,
        shardId: shard.shardId,
        streamArn: shard.streamArn,
        records,
        condition,
        invocations,
        functionError,
        now: this.clock.now(),
      },
      this.source,
    );
    if (this.onFailure)
      await withinBound(
        this.onFailure.send(record, records),
        shard.bound,
        'on-failure destination send',
        batch[0] === undefined ? undefined : this.source.identity(batch[0].record as R).sequenceNumber,
      );
    shard.result.discarded += batch.length;
    this.emit({ type: 'discard', shardId: shard.shardId, lane: lane.index, condition, record });
    await this.windows.settleLost(shard, lane, batch);
  }

  /** Records retried until the stream trimmed them: Lambda can no longer read them, so they are lost. */
  private async expire(shard: ShardState, lane: Lane, batch: Entry[]): Promise<void> {
    shard.result.discarded += batch.length;
    shard.result.expired += batch.length;
    this.emit({
      type: 'expired',
      shardId: shard.shardId,
      lane: lane.index,
      sequenceNumbers: batch.map((e) => e.sequenceNumber),
    });
    await this.windows.settleLost(shard, lane, batch);
  }

  private async invoke(
    shard: ShardState,
    lane: Lane,
    batch: Entry[],
    attempt: number,
    window: WindowCall | undefined,
  ): Promise<Attempt> {
    const requestId = randomUUID();
    const records = batch.map((e) => e.record);
    const now = this.clock.now();
    for (const entry of batch) entry.deliveredAt ??= now;
    this.emit({
      type: 'invoke',
      shardId: shard.shardId,
      lane: lane.index,
      requestId,
      attempt,
      sequenceNumbers: batch.map((e) => e.sequenceNumber),
      ...(window
        ? {
            window: {
              start: isoSecond(window.segment.span.startMs),
              end: isoSecond(window.segment.span.endMs),
              final: window.final,
              terminatedEarly: window.terminatedEarly,
            },
          }
        : {}),
    });
    const context = createLambdaContext({
      functionName: this.functionName,
      functionArn: this.functionArn,
      timeoutMs: this.timeoutMs,
      memoryLimitInMB: this.memorySize,
      awsRequestId: requestId,
    });
    const event = window
      ? windowEvent(records, window.segment, shard.shardId, shard.streamArn, window)
      : { Records: records };
    const result = await callHandler(this.handler, event, context, {
      timeoutMs: this.timeoutMs,
      timedOutSettleMs: this.timedOutSettleMs,
      firstSequenceNumber: batch[0]?.sequenceNumber ?? 'none (a final invocation)',
    });
    const outcome: Attempt =
      'error' in result
        ? result
        : judgeResponse(result.value, (id) => indexOfSequence(batch, id), {
            reportBatchItemFailures: this.reportFailures,
            windowed: window !== undefined,
          });
    this.emit({
      type: 'response',
      shardId: shard.shardId,
      lane: lane.index,
      requestId,
      outcome: outcome.outcome,
      ...(outcome.outcome === 'partial-failure'
        ? { failedSequenceNumber: (batch[outcome.index] as Entry).sequenceNumber }
        : {}),
      ...('error' in outcome ? { error: outcome.error } : partialFailureCause(outcome, result)),
    });
    return outcome;
  }

  private async advanceCheckpoint(shard: ShardState): Promise<void> {
    const entries = shard.entries;
    let head = shard.head;
    while (head < entries.length && (entries[head] as Entry).done) head++;
    if (head === shard.head) return;
    const sequenceNumber = (entries[head - 1] as Entry).sequenceNumber;
    if (head > 4096) {
      entries.splice(0, head);
      head = 0;
    }
    shard.head = head;
    shard.checkpoint = sequenceNumber;
    this.emit({ type: 'checkpoint', shardId: shard.shardId, sequenceNumber });
    if (shard.onCheckpoint)
      await withinBound(
        Promise.resolve(shard.onCheckpoint(sequenceNumber)),
        shard.bound,
        'checkpoint callback',
        sequenceNumber,
      );
  }

  private emit(event: EmulatorEvent): void {
    if (this.keepLog) this.log.push(event);
    this.onEvent?.(event);
  }
}

/**
 * The mapping's FilterCriteria, held to the account's quota as CreateEventSourceMapping holds it,
 * with a warning for a condition Lambda accepts but that can never match a stream record.
 */
function compileFilters(
  patterns: ReadonlyArray<string | FilterPattern>,
  maxFilters: number,
): EventMatcher | undefined {
  if (patterns.length === 0) return undefined;
  if (patterns.length > maxFilters) {
    throw new FilterCriteriaError(
      'too-many-filters',
      `${patterns.length} filter patterns, but the mapping allows ${maxFilters}` +
        (maxFilters < MAX_FILTERS_QUOTA
          ? ` (Lambda's default quota; raised to up to ${MAX_FILTERS_QUOTA} on request, then pass maxFilters)`
          : " (Lambda's maximum)"),
    );
  }
  patterns.forEach((pattern, i) => {
    for (const warning of patternWarnings(pattern)) emitFilterWarning(`filter ${i}: ${warning}`);
  });
  return compileFilterCriteria(patterns);
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

/**
 * Records of one lane key (the item's keys, or the Kinesis partition key) always land in the same
 * lane, so their order holds.
 */
function laneOf(key: string, lanes: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % lanes;
}

/** Lambda's DynamoDB Streams event source mapping, locally (see MappingEmulator). */
export class EventSourceMappingEmulator extends MappingEmulator<LambdaStreamRecord> {
  constructor(options: EventSourceMappingOptions) {
    super(options, DYNAMODB_SOURCE);
  }
}

/** A partial failure's cause, when the handler attached one (tidewater's pipeline does). */
function partialFailureCause(outcome: { outcome: string }, result: object): { error?: string } {
  if (outcome.outcome !== 'partial-failure' || !('value' in result)) return {};
  const cause = failureCauseOf(result.value);
  return cause === undefined ? {} : { error: cause };
}
