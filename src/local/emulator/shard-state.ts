import type { Verdict } from '../../lambda/stream-response.js';
import type { ShardResult } from './emulator-log.js';
import type { WindowInvocation, WindowSegment, WindowSpan } from './tumbling-window.js';
import type { WaitBound } from './wait-bound.js';

// What the emulator keeps per shard and per lane while it runs one shard: shared by the emulator,
// its window lifecycle and its stall watchdog.

export interface Entry {
  /** The record as its source delivers it (see record-source.ts). */
  record: unknown;
  sequenceNumber: string;
  eventId: string | undefined;
  seq: bigint;
  /** When the stream stamped it, epoch ms (RecordSource.stampedAtMs). */
  stampedAtMs: number | undefined;
  done: boolean;
  /** When it was first invoked (clock ms): from then on it can expire from the stream while retried. */
  deliveredAt: number | undefined;
  /** With a tumbling window: the window it is aggregated in. */
  span: WindowSpan | undefined;
}

export interface ShardState {
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

export interface Lane {
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

export type Attempt = Verdict | { outcome: 'function-error' | 'timeout'; error: string };

/** What a windowed invocation needs besides its records. */
export interface WindowCall extends WindowInvocation {
  segment: WindowSegment<Entry>;
}

export function markDone(batch: readonly Entry[]): void {
  for (const entry of batch) entry.done = true;
}

/** The error an attempt ended with, as a stall report quotes it. */
export function attemptError(attempt: Attempt, batch: readonly Entry[]): string {
  if (attempt.outcome === 'partial-failure')
    return `batchItemFailures reported ${(batch[attempt.index] as Entry).sequenceNumber} as failed`;
  return 'error' in attempt ? attempt.error : attempt.outcome;
}
