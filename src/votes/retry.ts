import pRetry from 'p-retry';
import { VoteRequestFailedError } from './errors.js';

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

/** A batch call came back with part of its work undone; retried like throttling. */
export class PartialBatchError extends Error {
  override name = 'PartialBatchError';
  constructor(readonly remaining: number) {
    super(`${remaining} item(s) left unprocessed`);
  }
}

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
 * Exponential backoff with jitter (p-retry's randomize), 20 ms doubling to 1 s. Gives up on a
 * retryable failure with VoteRequestFailedError naming the operation and the attempts made. A
 * failure that is not retryable (a failed condition, validation) is rethrown as is, whichever
 * attempt it came on, so callers can tell "the condition failed" from "DynamoDB kept failing".
 */
export async function withRetries<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {
  let attempts = 0;
  let lastError: unknown;
  const retryable = (error: unknown): boolean =>
    error instanceof PartialBatchError ||
    isRejectedUnapplied(error) ||
    (options.retryClass === 'idempotent' && isAmbiguous(error)) ||
    (options.alsoRetry?.(error) ?? false);
  try {
    return await pRetry(
      () => {
        attempts++;
        if (attempts > 1) options.onRetry?.(lastError);
        return fn();
      },
      {
        retries: options.attempts - 1,
        minTimeout: 20,
        maxTimeout: 1_000,
        factor: 2,
        randomize: true,
        shouldRetry: ({ error }) => retryable(error),
        onFailedAttempt: ({ error }) => {
          lastError = error;
        },
      },
    );
  } catch (error) {
    if (attempts >= options.attempts && retryable(error)) {
      throw new VoteRequestFailedError(options.operation, attempts, { cause: error });
    }
    throw error;
  }
}

/** Retry hook that tells retries of unprocessed batch work apart from throttles and faults. */
export function countRetries(stats: {
  retries: number;
  unprocessedRetries: number;
}): (error: unknown) => void {
  return (error) => {
    if (error instanceof PartialBatchError) stats.unprocessedRetries++;
    else stats.retries++;
  };
}
