import type { TimeWindowEvent } from '../../pipeline/window-event.js';
import type { LambdaStreamRecord } from '../../records/index.js';

/**
 * Tumbling windows as Lambda's DynamoDB event source mapping runs them (Lambda developer guide,
 * "Using tumbling windows with DynamoDB"): the pure parts — which window a record belongs to, and
 * the event a window's invocation carries. What a response must return is in response.ts.
 */

/** `TumblingWindowInSeconds`: 0 (no window) to 900 (the guide's DynamoDB parameter table). */
export const MAX_TUMBLING_WINDOW_SECONDS = 900;

/** A window's bounds, epoch milliseconds; `endMs` is the next window's start. */
export interface WindowSpan {
  readonly startMs: number;
  readonly endMs: number;
}

/**
 * The window a record belongs to. "Lambda determines tumbling window boundaries based on the time
 * when records were inserted into the stream" (ApproximateCreationDateTime), and windows "open and
 * close at regular intervals": boundaries are multiples of the width since the epoch, so a
 * 120-second window runs 17:00:00–17:02:00, never 17:00:37–17:02:37. A record without a creation
 * time is placed by `nowMs`.
 */
export function windowSpanOf(record: LambdaStreamRecord, widthMs: number, nowMs: number): WindowSpan {
  const created = record.dynamodb.ApproximateCreationDateTime;
  return windowSpanAt(created === undefined ? undefined : created * 1000, widthMs, nowMs);
}

/** The window of a record the stream stamped at `stampedAtMs` (any source: see RecordSource.stampedAtMs). */
export function windowSpanAt(stampedAtMs: number | undefined, widthMs: number, nowMs: number): WindowSpan {
  const at = stampedAtMs ?? nowMs;
  const startMs = Math.floor(at / widthMs) * widthMs;
  return { startMs, endMs: startMs + widthMs };
}

/**
 * One open window of a shard: the state the last invocation returned, and the records handled in
 * it. Lambda checkpoints a window's records when its final invocation succeeds ("After successful
 * invocation, your function checkpoints the sequence number"), so they wait here until then.
 */
export interface WindowSegment<E> {
  readonly span: WindowSpan;
  state: Record<string, unknown>;
  /** Records processed or discarded in this segment: checkpointed by its final invocation. */
  readonly settled: E[];
}

export function openSegment<E>(span: WindowSpan): WindowSegment<E> {
  return { span, state: {}, settled: [] };
}

/** Whole seconds, as Lambda writes a window's bounds: `2020-07-30T17:00:00Z`. */
export function isoSecond(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export interface WindowInvocation {
  final: boolean;
  terminatedEarly: boolean;
}

/** The event of an invocation in a window, shaped as the guide's DynamodbTimeWindowEvent. */
export function windowEvent(
  records: readonly unknown[],
  segment: WindowSegment<unknown>,
  shardId: string,
  streamArn: string,
  invocation: WindowInvocation,
): TimeWindowEvent {
  return {
    Records: records as LambdaStreamRecord[],
    window: { start: isoSecond(segment.span.startMs), end: isoSecond(segment.span.endMs) },
    // A copy: a handler that mutates its event's state must not change what the emulator keeps.
    state: structuredClone(segment.state),
    shardId,
    eventSourceARN: streamArn,
    isFinalInvokeForWindow: invocation.final,
    isWindowTerminatedEarly: invocation.terminatedEarly,
  };
}
