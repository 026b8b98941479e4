import { randomUUID } from 'node:crypto';
import {
  compileFilterCriteria,
  type EventMatcher,
  FilterCriteriaError,
  type FilterPattern,
  MAX_FILTERS_QUOTA,
  patternWarnings,
} from '../../filters/index.js';
import { emitFilterWarning } from '../../filters/lint.js';
import { WINDOW_STATE_LIMIT_BYTES, windowStateBytes } from '../../pipeline/window-event.js';
import type { LambdaStreamRecord } from '../../records/index.js';
import { type Clock, systemClock } from './clock.js';
import type { FailureCondition, FailureDestination } from './destinations.js';
import type { EmulatorEvent, ShardResult } from './emulator-log.js';
import { EmulatorStoppedError, ReplayStalledError, UnstreamableRecordError } from './errors.js';
import { callHandler } from './handler-call.js';
import { invocationRecord } from './invocation-record.js';
import { createLambdaContext, lambdaFunctionArn } from './lambda-context.js';
import {
  type EventSourceMappingOptions,
  readMappingOptions,
  reportsBatchItemFailures,
  type StreamHandler,
} from './mapping-options.js';
import { EVENT_ENVELOPE_BYTES, INVOCATION_PAYLOAD_LIMIT_BYTES, recordPayloadBytes } from './payload-limit.js';
import { createdAtMs, splitExpired, trimmedAtMs } from './record-age.js';
import { judgeResponse, type Verdict } from './response.js';
import {
  isoSecond,
  openSegment,
  type WindowInvocation,
  type WindowSegment,
  type WindowSpan,
  windowEvent,
  windowSpanOf,
} from './tumbling-window.js';
import { boundedPages, type WaitBound, withinBound } from './wait-bound.js';

export type { EmulatorEvent, InvocationOutcome, ShardResult } from './emulator-log.js';
export type {
  EventSourceMappingOptions,
  StreamHandler,
  StreamHandlerEvent,
  StreamHandlerResult,
} from './mapping-options.js';

export interface ShardInput {
  shardId: string;
  streamArn: string;
  /** Pages of records in shard order (e.g. one per GetRecords call). An empty page lets batching windows close. */
  pages: AsyncIterable<LambdaStreamRecord[]> | Iterable<LambdaStreamRecord[]>;
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

interface Entry {
  record: LambdaStreamRecord;
  seq: bigint;
  done: boolean;
  /** When it was first invoked (clock ms): from then on it can expire from the stream while retried. */
  deliveredAt: number | undefined;
  /** With a tumbling window: the window it is aggregated in. */
  span: WindowSpan | undefined;
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
  /** With a tumbling window: the window open on this shard, until its final invocation succeeds. */
  segment: WindowSegment<Entry> | undefined;
  /** How long a page, the checkpoint callback or the destination may take (see `waitBoundMs`). */
  bound: WaitBound;
}

interface Lane {
  index: number;
  buffer: Entry[];
  /** The buffered records' bytes in the invocation payload. */
  bufferBytes: number;
  /** When the current batching window opened (clock ms). */
  windowOpenedAt: number;
  /** An invocation of this lane has completed: batching windows open at completions from then on. */
  completedAny: boolean;
  /** Batches scheduled and not yet completed. */
  inFlight: number;
  /** With a tumbling window: the window the lane gathers records for, until it is closed. */
  span: WindowSpan | undefined;
  /** The latest window a record of this lane fell in (open or closed). */
  latest: WindowSpan | undefined;
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

type Attempt = Verdict | { outcome: 'function-error' | 'timeout'; error: string };

/** What a windowed invocation needs besides its records. */
interface WindowCall extends WindowInvocation {
  segment: WindowSegment<Entry>;
}

/**
 * Lambda's DynamoDB Streams event source mapping, locally: the same batching, filtering, retry,
 * bisect, partial-batch, record-age, tumbling-window and on-failure rules, applied to records from
 * any source (the stream poller, a replay file, built events). Everything it decides is in `log`.
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
  /** Tumbling window width; 0 without one. */
  private readonly tumblingMs: number;
  private readonly onFailure: FailureDestination | undefined;
  private readonly retryDelayMs: number;
  private readonly timedOutSettleMs: number;
  /** Infinity when retries are bounded or the user asked for endless ones. */
  private readonly stallAfter: number;
  /** A window's final invocation is retried without bound by Lambda: this ends it locally. */
  private readonly finalStallAfter: number;
  private readonly clock: Clock;
  private readonly onEvent: ((event: EmulatorEvent) => void) | undefined;
  private readonly keepLog: boolean;
  private readonly waitBoundMs: number;
  private stopped = false;

  constructor(options: EventSourceMappingOptions) {
    const o = readMappingOptions(options);
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
    this.tumblingMs = o.tumblingWindowInSeconds * 1000;
    // A window's state is per shard ("1 MB per shard"), so a windowed shard runs one batch at a time.
    this.lanes = this.tumblingMs > 0 ? 1 : o.parallelizationFactor;
    this.onFailure = o.onFailure;
    this.retryDelayMs = o.retryDelayMs;
    this.timedOutSettleMs = o.timedOutSettleMs;
    this.finalStallAfter = o.stallAfterAttempts ?? DEFAULT_STALL_AFTER_ATTEMPTS;
    this.stallAfter = this.maxRetries < 0 ? this.finalStallAfter : Number.POSITIVE_INFINITY;
    this.clock = o.clock ?? systemClock;
    this.onEvent = o.onEvent;
    this.keepLog = o.keepLog;
    this.waitBoundMs = o.waitBoundMs;
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
        const entry: Entry = {
          record,
          seq: sequenceOf(record),
          done: false,
          deliveredAt: undefined,
          span: undefined,
        };
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
        if (this.tumblingMs > 0) this.placeInWindow(shard, lane, entry, now);
        this.gather(shard, lane, entry, now);
      }
      for (const lane of lanes) {
        if (lane.buffer.length > 0 && this.batchingWindowClosed(lane, now)) this.flush(shard, lane);
        // The tumbling window's end has passed: its final invocation, after its last records.
        if (lane.span !== undefined && now >= lane.span.endMs) this.closeWindow(shard, lane);
      }
      await this.settle(shard, lanes);
    }
    const shardEnded = input.shardEnded?.() ?? true;
    for (const lane of lanes) {
      this.flush(shard, lane);
      if (lane.span !== undefined && shardEnded) this.closeWindow(shard, lane);
    }
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
    const bytes = recordPayloadBytes(entry.record);
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

  /**
   * Assigns a record to its tumbling window; a record of a later window closes the open one. A
   * record stamped earlier than the lane's latest window (creation times are approximate) joins
   * the latest window: a window is never reopened behind one that began after it.
   */
  private placeInWindow(shard: ShardState, lane: Lane, entry: Entry, now: number): void {
    let span = windowSpanOf(entry.record, this.tumblingMs, now);
    if (lane.latest !== undefined && span.startMs <= lane.latest.startMs) span = lane.latest;
    if (lane.span !== undefined && span.startMs > lane.span.startMs) this.closeWindow(shard, lane);
    lane.span = span;
    lane.latest = span;
    entry.span = span;
  }

  private flush(shard: ShardState, lane: Lane): void {
    if (lane.buffer.length === 0) return;
    const batch = lane.buffer;
    lane.buffer = [];
    lane.bufferBytes = 0;
    this.schedule(shard, lane, () => this.processBatch(shard, lane, batch));
  }

  /** Invokes what the lane gathered for its open window, then the window's final invocation. */
  private closeWindow(shard: ShardState, lane: Lane): void {
    const span = lane.span as WindowSpan;
    this.flush(shard, lane);
    lane.span = undefined;
    this.schedule(shard, lane, () => this.endSegment(shard, lane, span, false));
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
    const stall: StallWatch = { attempts: 0, clock: this.clock.now(), lastError: '' };
    while (pending.length > 0) {
      let batch = pending.shift() as Entry[];
      let retries = 0;
      let invocations = 0;
      while (batch.length > 0) {
        // Another lane's batch could not be settled: the shard stops here, as the whole mapping would.
        if (shard.failed) return;
        if (this.stopped) throw new EmulatorStoppedError(batch[0]?.record.dynamodb.SequenceNumber);
        batch = await this.dropAged(shard, lane, batch, invocations, stall);
        if (batch.length === 0) break;
        const window = this.windowCallFor(shard, batch);
        const attempt = await this.invoke(shard, lane, batch, retries + 1, window);
        invocations++;
        shard.result.invocations++;
        if (attempt.outcome === 'success') {
          await this.settleProcessed(shard, lane, batch, attempt.state);
          this.progressed(stall);
          break;
        }
        const settledSome = attempt.outcome === 'partial-failure' && attempt.index > 0;
        if (settledSome) this.progressed(stall);
        else this.failedWithoutProgress(stall, attempt, batch);
        if (settledSome) {
          // Lambda checkpoints at the lowest failed record now, not when the retries end: a
          // restart meanwhile redelivers from the failed record, never the records before it.
          await this.settleProcessed(shard, lane, batch.slice(0, attempt.index), attempt.state);
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
        this.emit({
          type: 'retry',
          shardId: shard.shardId,
          lane: lane.index,
          retry: retries,
          firstSequenceNumber: (batch[0] as Entry).record.dynamodb.SequenceNumber,
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
      this.maxAgeMs >= 0
        ? splitExpired(kept, (entry) => (createdAtMs(entry.record) ?? oldest) < oldest)
        : undefined;
    if (aged) {
      await this.discard(shard, lane, aged.expired, 'RecordAgeExceeded', invocations, undefined);
      kept = aged.kept;
    }
    const trimmed = splitExpired(
      kept,
      (entry) => entry.deliveredAt !== undefined && now >= trimmedAtMs(entry.record, entry.deliveredAt),
    );
    if (trimmed) {
      await this.expire(shard, lane, trimmed.expired);
      kept = trimmed.kept;
    }
    if (kept !== batch) {
      await this.advanceCheckpoint(shard);
      this.progressed(stall);
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
    const records = batch.map((e) => e.record);
    const record = invocationRecord({
      requestId: randomUUID(),
      functionArn: this.functionArn,
      shardId: shard.shardId,
      streamArn: shard.streamArn,
      records,
      condition,
      invocations,
      functionError,
      now: this.clock.now(),
    });
    if (this.onFailure)
      await withinBound(
        this.onFailure.send(record, records),
        shard.bound,
        'on-failure destination send',
        records[0]?.dynamodb.SequenceNumber,
      );
    shard.result.discarded += batch.length;
    this.emit({ type: 'discard', shardId: shard.shardId, lane: lane.index, condition, record });
    await this.settleLost(shard, lane, batch);
  }

  /** Records retried until the stream trimmed them: Lambda can no longer read them, so they are lost. */
  private async expire(shard: ShardState, lane: Lane, batch: Entry[]): Promise<void> {
    shard.result.discarded += batch.length;
    shard.result.expired += batch.length;
    this.emit({
      type: 'expired',
      shardId: shard.shardId,
      lane: lane.index,
      sequenceNumbers: batch.map((e) => e.record.dynamodb.SequenceNumber),
    });
    await this.settleLost(shard, lane, batch);
  }

  /** Records the function processed: checkpointed, or with a tumbling window kept for the window's end. */
  private async settleProcessed(
    shard: ShardState,
    lane: Lane,
    entries: Entry[],
    state: Record<string, unknown> | undefined,
  ): Promise<void> {
    const segment = shard.segment;
    if (this.tumblingMs === 0 || segment === undefined) {
      markDone(entries);
      await this.advanceCheckpoint(shard);
      return;
    }
    segment.settled.push(...entries);
    if (state !== undefined) segment.state = state;
    // "Your state can be a maximum of 1 MB per shard. If it exceeds that size, Lambda terminates
    // the window early."
    if (windowStateBytes(segment.state) > WINDOW_STATE_LIMIT_BYTES)
      await this.endSegment(shard, lane, segment.span, true);
  }

  /**
   * Records given up on (discarded or expired). With a tumbling window the window's state no
   * longer covers every record of it, so the window ends early: its final invocation says so
   * (isWindowTerminatedEarly), and the rest of the window starts again from an empty state.
   */
  private async settleLost(shard: ShardState, lane: Lane, entries: Entry[]): Promise<void> {
    const span = entries[0]?.span;
    if (this.tumblingMs === 0 || span === undefined) {
      markDone(entries);
      return;
    }
    this.segmentFor(shard, span).settled.push(...entries);
    await this.endSegment(shard, lane, span, true);
  }

  /** The open window of a batch's records; a window not open yet (or ended early) starts empty. */
  private segmentFor(shard: ShardState, span: WindowSpan): WindowSegment<Entry> {
    if (shard.segment === undefined || shard.segment.span.startMs !== span.startMs)
      shard.segment = openSegment<Entry>(span);
    return shard.segment;
  }

  private windowCallFor(shard: ShardState, batch: Entry[]): WindowCall | undefined {
    const span = batch[0]?.span;
    if (this.tumblingMs === 0 || span === undefined) return undefined;
    return { segment: this.segmentFor(shard, span), final: false, terminatedEarly: false };
  }

  /**
   * A window's final invocation: the state, no records, `isFinalInvokeForWindow`. "If invocation
   * is unsuccessful, your Lambda function suspends further processing until a successful
   * invocation": it is retried without a bound (the stall check ends that locally). On success
   * the window's records are checkpointed and its state dropped.
   */
  private async endSegment(shard: ShardState, lane: Lane, span: WindowSpan, early: boolean): Promise<void> {
    const segment = shard.segment;
    if (segment === undefined || segment.span.startMs !== span.startMs) return;
    let failures = 0;
    let lastError = '';
    for (let attempt = 1; ; attempt++) {
      if (shard.failed) return;
      if (this.stopped) throw new EmulatorStoppedError(segment.settled[0]?.record.dynamodb.SequenceNumber);
      const verdict = await this.invoke(shard, lane, [], attempt, {
        segment,
        final: true,
        terminatedEarly: early,
      });
      shard.result.invocations++;
      if (verdict.outcome === 'success') break;
      failures++;
      lastError = 'error' in verdict ? verdict.error : verdict.outcome;
      if (failures >= this.finalStallAfter) {
        throw new ReplayStalledError({
          shardId: shard.shardId,
          sequenceNumbers: segment.settled.map((e) => e.record.dynamodb.SequenceNumber),
          eventIds: segment.settled.map((e) => e.record.eventID),
          attempts: failures,
          lastError,
          checkpoint: shard.checkpoint,
          finalInvokeOfWindow: isoSecond(span.startMs),
        });
      }
      this.emit({
        type: 'retry',
        shardId: shard.shardId,
        lane: lane.index,
        retry: attempt,
        firstSequenceNumber: segment.settled[0]?.record.dynamodb.SequenceNumber ?? '',
        size: 0,
      });
      await this.pauseBeforeRetry();
    }
    markDone(segment.settled);
    shard.segment = undefined;
    await this.advanceCheckpoint(shard);
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
      sequenceNumbers: records.map((r) => r.dynamodb.SequenceNumber),
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
      firstSequenceNumber: records[0]?.dynamodb.SequenceNumber ?? 'none (a final invocation)',
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
        ? { failedSequenceNumber: (batch[outcome.index] as Entry).record.dynamodb.SequenceNumber }
        : {}),
      ...('error' in outcome ? { error: outcome.error } : {}),
    });
    return outcome;
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

function markDone(batch: Entry[]): void {
  for (const entry of batch) entry.done = true;
}

/** The record's sequence number as the emulator orders by it; digits only, as DynamoDB writes them. */
function sequenceOf(record: LambdaStreamRecord): bigint {
  const text = record.dynamodb?.SequenceNumber;
  if (typeof text !== 'string' || !/^\d{1,40}$/.test(text)) {
    throw new UnstreamableRecordError(
      record.eventID,
      typeof text === 'string' ? text : undefined,
      `SequenceNumber ${JSON.stringify(text)} is not a DynamoDB sequence number (1 to 40 digits); the emulator orders records by it`,
    );
  }
  return BigInt(text);
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
