import { WINDOW_STATE_LIMIT_BYTES, windowStateBytes } from '../../pipeline/window-event.js';
import type { EmulatorEvent } from './emulator-log.js';
import { EmulatorStoppedError } from './errors.js';
import {
  type Attempt,
  type Entry,
  type Lane,
  markDone,
  type ShardState,
  type WindowCall,
} from './shard-state.js';
import { type StallPolicy, StallWatch } from './stall-watchdog.js';
import { openSegment, type WindowSegment, type WindowSpan, windowSpanAt } from './tumbling-window.js';

/** What the window lifecycle asks of the emulator that runs it. */
export interface WindowHost {
  /** Schedules the lane's gathered records as a batch. */
  flush(shard: ShardState, lane: Lane): void;
  /** Runs a task after the lane's earlier batches. */
  schedule(shard: ShardState, lane: Lane, task: () => Promise<void>): void;
  invoke(
    shard: ShardState,
    lane: Lane,
    batch: Entry[],
    attempt: number,
    window: WindowCall,
  ): Promise<Attempt>;
  advanceCheckpoint(shard: ShardState): Promise<void>;
  emit(event: EmulatorEvent): void;
  pauseBeforeRetry(): Promise<void>;
  stopped(): boolean;
}

/**
 * Tumbling windows through a shard's life (Lambda developer guide, "Using tumbling windows"):
 * which window each record joins, the state carried between a window's invocations, a window
 * ended early when its records are lost or its state passes 1 MB, and its final invocation, after
 * which its records are checkpointed. The pure parts (spans, the event) are in tumbling-window.ts.
 */
export class WindowLifecycle {
  constructor(
    /** Tumbling window width; 0 without one. */
    private readonly widthMs: number,
    /** A window's final invocation is retried without bound by Lambda: this ends it locally. */
    private readonly finalStallAfter: number,
    private readonly stallPolicy: StallPolicy,
    private readonly host: WindowHost,
  ) {}

  get enabled(): boolean {
    return this.widthMs > 0;
  }

  /**
   * Assigns a record to its tumbling window; a record of a later window closes the open one. A
   * record stamped earlier than the lane's latest window (creation times are approximate) joins
   * the latest window: a window is never reopened behind one that began after it.
   */
  place(shard: ShardState, lane: Lane, entry: Entry, now: number): void {
    let span = windowSpanAt(entry.stampedAtMs, this.widthMs, now);
    if (lane.latest !== undefined && span.startMs <= lane.latest.startMs) span = lane.latest;
    if (lane.span !== undefined && span.startMs > lane.span.startMs) this.close(shard, lane);
    lane.span = span;
    lane.latest = span;
    entry.span = span;
  }

  /** After a page: a window whose end has passed gets its final invocation, after its last records. */
  closeIfEnded(shard: ShardState, lane: Lane, now: number): void {
    if (lane.span !== undefined && now >= lane.span.endMs) this.close(shard, lane);
  }

  /** Invokes what the lane gathered for its open window, then the window's final invocation. */
  close(shard: ShardState, lane: Lane): void {
    if (lane.span === undefined) return;
    const span = lane.span;
    this.host.flush(shard, lane);
    lane.span = undefined;
    this.host.schedule(shard, lane, () => this.end(shard, lane, span, false));
  }

  /** The window call of a batch; undefined without tumbling windows. */
  callFor(shard: ShardState, batch: Entry[]): WindowCall | undefined {
    const span = batch[0]?.span;
    if (this.widthMs === 0 || span === undefined) return undefined;
    return { segment: this.segmentFor(shard, span), final: false, terminatedEarly: false };
  }

  /** Records the function processed: checkpointed, or with a tumbling window kept for the window's end. */
  async settleProcessed(
    shard: ShardState,
    lane: Lane,
    entries: Entry[],
    state: Record<string, unknown> | undefined,
  ): Promise<void> {
    const segment = shard.segment;
    if (this.widthMs === 0 || segment === undefined) {
      markDone(entries);
      await this.host.advanceCheckpoint(shard);
      return;
    }
    segment.settled.push(...entries);
    if (state !== undefined) segment.state = state;
    // "Your state can be a maximum of 1 MB per shard. If it exceeds that size, Lambda terminates
    // the window early."
    if (windowStateBytes(segment.state) > WINDOW_STATE_LIMIT_BYTES)
      await this.end(shard, lane, segment.span, true);
  }

  /**
   * Records given up on (discarded or expired). With a tumbling window the window's state no
   * longer covers every record of it, so the window ends early: its final invocation says so
   * (isWindowTerminatedEarly), and the rest of the window starts again from an empty state.
   */
  async settleLost(shard: ShardState, lane: Lane, entries: Entry[]): Promise<void> {
    const span = entries[0]?.span;
    if (this.widthMs === 0 || span === undefined) {
      markDone(entries);
      return;
    }
    this.segmentFor(shard, span).settled.push(...entries);
    await this.end(shard, lane, span, true);
  }

  /** The open window of a batch's records; a window not open yet (or ended early) starts empty. */
  private segmentFor(shard: ShardState, span: WindowSpan): WindowSegment<Entry> {
    if (shard.segment === undefined || shard.segment.span.startMs !== span.startMs)
      shard.segment = openSegment<Entry>(span);
    return shard.segment;
  }

  /**
   * A window's final invocation: the state, no records, `isFinalInvokeForWindow`. "If invocation
   * is unsuccessful, your Lambda function suspends further processing until a successful
   * invocation": it is retried without a bound (the stall watch ends that locally). On success
   * the window's records are checkpointed and its state dropped.
   */
  private async end(shard: ShardState, lane: Lane, span: WindowSpan, early: boolean): Promise<void> {
    const segment = shard.segment;
    if (segment === undefined || segment.span.startMs !== span.startMs) return;
    const stall = new StallWatch(this.stallPolicy);
    for (let attempt = 1; ; attempt++) {
      if (shard.failed) return;
      if (this.host.stopped()) throw new EmulatorStoppedError(segment.settled[0]?.sequenceNumber);
      const verdict = await this.host.invoke(shard, lane, [], attempt, {
        segment,
        final: true,
        terminatedEarly: early,
      });
      shard.result.invocations++;
      if (verdict.outcome === 'success') break;
      stall.failed('error' in verdict ? verdict.error : verdict.outcome, false);
      if (stall.attempts >= this.finalStallAfter) throw stall.error(shard, segment.settled, span.startMs);
      this.host.emit({
        type: 'retry',
        shardId: shard.shardId,
        lane: lane.index,
        retry: attempt,
        firstSequenceNumber: segment.settled[0]?.sequenceNumber ?? '',
        size: 0,
      });
      await this.host.pauseBeforeRetry();
    }
    markDone(segment.settled);
    shard.segment = undefined;
    await this.host.advanceCheckpoint(shard);
  }
}
