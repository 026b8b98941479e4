import type { LambdaStreamEvent } from '../records/types.js';

/**
 * Lambda's limit on a tumbling window's state: "Your state can be a maximum of 1 MB per shard"
 * (Lambda developer guide, "Using tumbling windows with DynamoDB"). Measured here as the UTF-8
 * bytes of the state's JSON, which is what Lambda stores and hands back.
 */
export const WINDOW_STATE_LIMIT_BYTES = 1024 * 1024;

/** A window's bounds, as Lambda writes them: ISO-8601 UTC to the second (`2020-07-30T17:00:00Z`). */
export interface TimeWindow {
  start: string;
  end: string;
}

/**
 * What Lambda invokes a function with when its DynamoDB event source mapping has a tumbling
 * window (`TumblingWindowInSeconds` > 0): the batch, plus the window, the state the previous
 * invocation of this window returned (`{}` at the window's start), and the flags. The final
 * invocation of a window (`isFinalInvokeForWindow`) carries the state and no records.
 */
export interface TimeWindowEvent<State = Record<string, unknown>> extends LambdaStreamEvent {
  window: TimeWindow;
  state: State;
  shardId: string;
  eventSourceARN: string;
  isFinalInvokeForWindow: boolean;
  /** The window ended before its time (the state passed 1 MB): the next invocation continues it with `{}`. */
  isWindowTerminatedEarly: boolean;
}

/**
 * What a function on a tumbling window returns. `state` is required: Lambda counts a response
 * without it as a failed invocation. `batchItemFailures` counts only with ReportBatchItemFailures.
 */
export interface TimeWindowResponse<State = Record<string, unknown>> {
  state: State;
  batchItemFailures?: { itemIdentifier: string }[];
}

/** The size Lambda's 1 MB state limit is checked against: the UTF-8 bytes of the state's JSON. */
export function windowStateBytes(state: unknown): number {
  return Buffer.byteLength(JSON.stringify(state) ?? '', 'utf8');
}
