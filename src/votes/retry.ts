import { PartialFailureError } from '../core/errors.js';
import { RETRY_POLICIES, withAttempts, withRetry } from '../core/retry.js';
import { VoteRequestFailedError } from './errors.js';
import type { RequestStats } from './stats.js';

/** Errors DynamoDB returns for a request it did not apply: always safe to send again. */
const REJECTED_UNAPPLIED = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'TransactionConflictException',
  'TransactionInProgressException',
]);

/** Failures where the request may or may not have been applied (5xx, timeouts, resets). */
function isAmbiguous(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined && status >= 500) return true;
  return (
    e.name === 'TimeoutError' ||
    e.name === 'InternalServerError' ||
    e.name === 'ServiceUnavailable' ||
    e.code === 'ECONNRESET' ||
    e.code === 'ETIMEDOUT' ||
    e.code === 'EPIPE'
  );
}

export function isRejectedUnapplied(error: unknown): boolean {
  return typeof error === 'object' && error !== null && REJECTED_UNAPPLIED.has((error as Error).name);
}

/**
 * Which failures a caller may retry. Idempotent requests (reads, conditional SETs, transactions
 * guarded by a marker) may retry ambiguous failures too; a bare ADD may not (reference 003).
 */
export type RetryClass = 'idempotent' | 'not-idempotent';

export interface RetryOptions {
  operation: string;
  attempts: number;
  retryClass: RetryClass;
  /** Called before each retry (metrics). */
  onRetry?: (error: unknown) => void;
  /** Extra retryable failures, e.g. a transaction cancelled only by a conflict. */
  alsoRetry?: (error: unknown) => boolean;
}

/**
 * RETRY_POLICIES.voteRequest (core/retry) with the caller's attempts. Gives up on a retryable
 * failure with VoteRequestFailedError naming the operation and the attempts made. A failure that
 * is not retryable (a failed condition, validation) is rethrown as is, whichever attempt it came
 * on, so callers can tell "the condition failed" from "DynamoDB kept failing". A call that left
 * work undone throws PartialFailureError, retried like throttling.
 */
export async function withRetries<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {
  const { retryClass, alsoRetry, onRetry } = options;
  return withRetry(fn, {
    policy: withAttempts(RETRY_POLICIES.voteRequest, options.attempts),
    retryable: (error) =>
      error instanceof PartialFailureError ||
      isRejectedUnapplied(error) ||
      (retryClass === 'idempotent' && isAmbiguous(error)) ||
      (alsoRetry?.(error) ?? false),
    onRetry: onRetry === undefined ? undefined : (error) => onRetry(error),
    onExhausted: (error, attempts) =>
      new VoteRequestFailedError(options.operation, attempts, { cause: error }),
  });
}

/** Retry hook that tells retries of unprocessed batch work apart from throttles and faults. */
export function countRetries(stats: {
  retries: number;
  unprocessedRetries: number;
}): (error: unknown) => void {
  return (error) => {
    if (error instanceof PartialFailureError) stats.unprocessedRetries++;
    else stats.retries++;
  };
}

/** The RequestStats counter a kind of request adds to. */
type RequestCounter = 'query' | 'batchGetItem' | 'batchWriteItem' | 'updateItem';

/**
 * `withRetries` of one request as the votes APIs report it: every send counted under `request`,
 * every retry by countRetries, `ctx.maxAttempts` attempts in all.
 */
export function countedRequest<T>(
  ctx: { readonly maxAttempts: number },
  stats: RequestStats,
  request: RequestCounter,
  send: () => Promise<T>,
  options: Pick<RetryOptions, 'operation' | 'retryClass'>,
): Promise<T> {
  return withRetries(
    () => {
      stats[request]++;
      return send();
    },
    { ...options, attempts: ctx.maxAttempts, onRetry: countRetries(stats) },
  );
}
