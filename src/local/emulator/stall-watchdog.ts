import type { Clock } from './clock.js';
import { ReplayStalledError } from './errors.js';
import type { Entry } from './shard-state.js';
import { isoSecond } from './tumbling-window.js';

/**
 * Failed invocations in a row, with nothing settled in between, after which unbounded retries end
 * (see `stallAfterAttempts`). Small enough that a poison record stops a replay in seconds, large
 * enough that a handler recovering from a transient failure (a throttled write, a sink restarting)
 * gets through.
 */
export const DEFAULT_STALL_AFTER_ATTEMPTS = 10;

export interface StallPolicy {
  clock: Clock;
  /** maximumRecordAgeInSeconds in ms; -1 without a limit. */
  maxAgeMs: number;
  retryDelayMs: number;
}

/**
 * One batch's failures since its last progress: what decides that it is stuck. Lambda retries
 * without bound (maximumRetryAttempts -1, and always a window's final invocation) until records
 * expire; locally that is a run that never ends, so the emulator ends it with ReplayStalledError.
 */
export class StallWatch {
  /** Failed invocations in a row without progress. */
  attempts = 0;
  lastError = '';
  /** The clock at the last failure or progress: with an age limit, time passing is progress. */
  private at: number;

  constructor(private readonly policy: StallPolicy) {
    this.at = policy.clock.now();
  }

  /** A record of the batch was checkpointed or discarded: whatever failed before is not stuck. */
  progressed(): void {
    this.attempts = 0;
    this.at = this.policy.clock.now();
  }

  /**
   * An invocation failed with nothing settled. `ageCounts`: the age limit applies to what was
   * invoked (a window's final invocation carries no records, so for it no age limit comes).
   */
  failed(error: string, ageCounts: boolean): void {
    this.lastError = error;
    const now = this.policy.clock.now();
    // With an age limit, a clock that moves (on its own, or by the retry delay) will reach it and
    // the records will be discarded, as Lambda discards them: not stuck. A clock that stands still
    // (a replay's, without retryDelayMs) never gets there.
    const ageApproaching =
      ageCounts && this.policy.maxAgeMs >= 0 && (now !== this.at || this.policy.retryDelayMs > 0);
    this.attempts = ageApproaching ? 0 : this.attempts + 1;
    this.at = now;
  }

  /**
   * The error that ends the run: the stuck records, and with `windowStartMs` the tumbling window
   * whose final invocation kept failing.
   */
  error(
    shard: { shardId: string; checkpoint: string | undefined },
    entries: readonly Entry[],
    windowStartMs?: number,
  ): ReplayStalledError {
    return new ReplayStalledError({
      shardId: shard.shardId,
      sequenceNumbers: entries.map((e) => e.sequenceNumber),
      eventIds: entries.map((e) => e.eventId ?? '?'),
      attempts: this.attempts,
      lastError: this.lastError,
      checkpoint: shard.checkpoint,
      ...(windowStartMs !== undefined
        ? { finalInvokeOfWindow: isoSecond(windowStartMs) }
        : this.policy.maxAgeMs >= 0
          ? { maximumRecordAgeInSeconds: this.policy.maxAgeMs / 1000 }
          : {}),
    });
  }
}
