import type { MappingInvocationRecord } from '../../records/on-failure-record.js';
import type { FailureCondition } from './destinations.js';

// What the emulator reports: each decision as it happens (EmulatorEvent) and each shard's totals.

/** How one emulated invocation ended. */
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
      /** With a tumbling window: the window, and whether this is its final invocation. */
      window?: { start: string; end: string; final: boolean; terminatedEarly: boolean };
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
      record: MappingInvocationRecord;
    }
  | {
      /**
       * Records retried past the stream's 24-hour retention: trimmed from the stream, so Lambda
       * can no longer read them (TrimmedDataAccessException) and they are lost.
       */
      type: 'expired';
      shardId: string;
      lane: number;
      sequenceNumbers: string[];
    }
  | { type: 'checkpoint'; shardId: string; sequenceNumber: string };

/** What the emulator did with one shard: its checkpoint and counts. */
export interface ShardResult {
  shardId: string;
  /** The last sequence number handled; undefined when no record arrived. */
  checkpoint: string | undefined;
  records: number;
  filtered: number;
  /** Records sent to the on-failure destination (or dropped without one), and expired ones. */
  discarded: number;
  /** Of `discarded`: records retried past the stream's 24-hour retention. */
  expired: number;
  invocations: number;
}
