import pRetry from 'p-retry';
import type { RetryPolicy } from './backoff.js';

// What a caller of withRetry also needs to name its policy (sinks and votes import it from here).
export type { RetryPolicy } from './backoff.js';
export { RETRY_POLICIES, withAttempts } from './backoff.js';

export interface RetryRun {
  /** A named policy from RETRY_POLICIES (maybe `withAttempts(…)` from a caller's option). */
  readonly policy: RetryPolicy;
  /**
   * The one "not retryable" rule: false rethrows the error at once, whichever attempt it came on.
   * (As in p-retry, a TypeError that is not a network error is never retried: it is a bug.)
   */
  readonly retryable: (error: unknown) => boolean;
  readonly signal?: AbortSignal | undefined;
  /** Called before each retry with the error that caused it (metrics). */
  readonly onRetry?: (error: unknown, retry: number) => void;
  /**
   * What to throw when the last attempt failed with a retryable error (a module's typed error
   * naming the operation). Default: that last error.
   */
  readonly onExhausted?: (error: unknown, attempts: number) => unknown;
}

/**
 * Runs `fn` until it succeeds, fails with an error `retryable` refuses, or the policy's attempts
 * are used up, waiting `backoffDelay(policy, r)` before retry r. Aborting the signal ends a wait
 * with the signal's reason. For work off the per-record path: this loads p-retry.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, run: RetryRun): Promise<T> {
  const { policy, retryable, onRetry } = run;
  let attempts = 0;
  let lastError: unknown;
  try {
    return await pRetry(
      (attempt) => {
        attempts = attempt;
        if (attempt > 1) onRetry?.(lastError, attempt - 1);
        return fn(attempt);
      },
      {
        retries: policy.attempts - 1,
        minTimeout: policy.baseDelayMs,
        maxTimeout: policy.maxDelayMs,
        factor: 2,
        randomize: true,
        signal: run.signal,
        shouldRetry: ({ error }) => retryable(error),
        onFailedAttempt: ({ error }) => {
          lastError = error;
        },
      },
    );
  } catch (error) {
    if (
      run.onExhausted !== undefined &&
      attempts >= policy.attempts &&
      error === lastError &&
      retryable(error)
    ) {
      throw run.onExhausted(error, attempts);
    }
    throw error;
  }
}
