/**
 * Every retry in tidewater waits by one schedule: p-retry's with `factor: 2, randomize: true`.
 * Before retry r (1, 2, …) it waits min(round((1 + random) × baseDelayMs × 2^(r−1)), maxDelayMs).
 * This file holds that formula and the table of named policies without importing p-retry, so a
 * hot path that retries in a loop of its own (the pipeline, the archive sink's conflict retry)
 * keeps p-retry (3.8 KB minified) out of a handler's bundle; core/retry.ts runs the same policies
 * through p-retry for everything else.
 */

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  /** The wait before the first retry (×1..2 at random); it doubles each retry. */
  readonly baseDelayMs: number;
  /** Cap on one wait. */
  readonly maxDelayMs: number;
}

// The named policies, one per kind of work that retries, each its own constant so a bundle
// carries only those its code names (a property of one shared object would keep them all);
// RETRY_POLICIES lists them. A caller's option may change a policy's attempts (or, for the
// pipeline, all three values), never the formula.

/**
 * No cap. Named once: a policy object spelling `Number.POSITIVE_INFINITY` is a property read the
 * bundler keeps, and with it the object, in every bundle (an unused policy included).
 */
const UNCAPPED = Number.POSITIVE_INFINITY;

/** The pipeline's redelivery of failed records to their sinks and handler (`retry` in PipelineConfig). */
export const SINK_WRITE_POLICY = { attempts: 3, baseDelayMs: 100, maxDelayMs: 2_000 } as const;
/** A votes request to DynamoDB (counter writes, aggregator reads and updates, registry). */
export const VOTE_REQUEST_POLICY = { attempts: 8, baseDelayMs: 20, maxDelayMs: 1_000 } as const;
/** restoreItems' resubmission of a BatchWriteItem's UnprocessedItems (throttling). */
export const RESTORE_BATCH_POLICY = { attempts: 9, baseDelayMs: 50, maxDelayMs: 5_000 } as const;
/** SqsDeadLetterSink's resend of entries SQS failed with a server fault. */
export const DEAD_LETTER_SEND_POLICY = {
  attempts: 4,
  baseDelayMs: 100,
  maxDelayMs: UNCAPPED,
} as const;
/**
 * S3ArchiveSink after 409 ConditionalRequestConflict: a concurrent conditional write of the same
 * key usually settles within ~100 ms, and the random factor keeps racing writers out of step.
 */
export const ARCHIVE_CONFLICT_POLICY = {
  attempts: 3,
  baseDelayMs: 25,
  maxDelayMs: UNCAPPED,
} as const;
/**
 * A request of a client an S3 or SQS sink builds (SinkRetryStrategy), 8 attempts unless the
 * sink's `maxAttempts` says otherwise: the SDK standard strategy's base delay, capped lower so
 * the attempts fit in an invocation (the deadline's abort ends the wait anyway).
 */
export const SINK_REQUEST_POLICY = { attempts: 8, baseDelayMs: 100, maxDelayMs: 5_000 } as const;

/** Every named policy by the kind of work it is for. */
export const RETRY_POLICIES = {
  sinkWrite: SINK_WRITE_POLICY,
  voteRequest: VOTE_REQUEST_POLICY,
  restoreBatch: RESTORE_BATCH_POLICY,
  deadLetterSend: DEAD_LETTER_SEND_POLICY,
  archiveConflict: ARCHIVE_CONFLICT_POLICY,
  sinkRequest: SINK_REQUEST_POLICY,
} as const satisfies Record<string, RetryPolicy>;

export type RetryPolicyName = keyof typeof RETRY_POLICIES;

/** The policy with another attempt count (a caller's `maxAttempts` / `entryRetries` option). */
export function withAttempts(policy: RetryPolicy, attempts: number): RetryPolicy {
  return { attempts, baseDelayMs: policy.baseDelayMs, maxDelayMs: policy.maxDelayMs };
}

/** The wait before retry `retry` (1-based); `random` in [0, 1) is Math.random() unless a test pins it. */
export function backoffDelay(policy: RetryPolicy, retry: number, random = Math.random()): number {
  return Math.min(Math.round((1 + random) * policy.baseDelayMs * 2 ** (retry - 1)), policy.maxDelayMs);
}

/**
 * Waits `backoffDelay(policy, retry)`; rejects with the signal's reason once it aborts (before,
 * during or right after the wait), as p-retry does.
 */
export async function waitBeforeRetry(
  policy: RetryPolicy,
  retry: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  signal?.throwIfAborted();
  const ms = backoffDelay(policy, retry);
  if (ms > 0) {
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
  signal?.throwIfAborted();
}
