import { backoffDelay, SINK_REQUEST_POLICY } from '../core/backoff.js';

/** The parts of the SDK's retry token (RetryToken of @smithy/types) its retry middleware reads. */
export interface SinkRetryToken {
  getRetryCount(): number;
  getRetryDelay(): number;
}

/** The error classification the SDK's retry middleware hands a strategy (RetryErrorInfo). */
export interface SinkRetryErrorInfo {
  errorType: 'THROTTLING' | 'TRANSIENT' | 'SERVER_ERROR' | 'CLIENT_ERROR' | string;
  retryAfterHint?: Date;
}

/** The smallest retry strategy the SDK v3 clients accept as `retryStrategy` (RetryStrategyV2). */
export interface SdkRetryStrategy {
  acquireInitialRetryToken(scope: string): Promise<SinkRetryToken>;
  refreshRetryTokenForRetry(token: SinkRetryToken, errorInfo: SinkRetryErrorInfo): Promise<SinkRetryToken>;
  recordSuccess(token: SinkRetryToken): void;
}

/** A Retry-After hint longer than this is not waited for beyond the schedule's own delay. */
const RETRY_AFTER_CAP_MS = 5_000;

/**
 * The retry strategy of the clients the S3 and SQS sinks build: every throttling or transient
 * error (503 SlowDown, 500 InternalError, timeouts, resets) is retried until `maxAttempts`, with
 * tidewater's one backoff schedule (SINK_REQUEST_POLICY). The SDK's standard strategy
 * keeps a retry quota per client (500 tokens, 5 per retry, refilled only by successes): under
 * sustained 5xx it drains and every request fails after its first attempts — an archive PUT gave
 * up after 3 of its 8 — so records were dead-lettered that more patience would have stored. A
 * sink's writes are idempotent and bounded by the invocation's deadline, so no quota is kept.
 */
export class SinkRetryStrategy implements SdkRetryStrategy {
  readonly mode = 'standard';
  // The schedule's delays are SINK_REQUEST_POLICY's; only the attempts are the caller's.
  readonly #attempts: number;

  constructor(maxAttempts: number = SINK_REQUEST_POLICY.attempts) {
    this.#attempts = maxAttempts;
  }

  get maxAttempts(): number {
    return this.#attempts;
  }

  async acquireInitialRetryToken(): Promise<SinkRetryToken> {
    return token(0, 0);
  }

  async refreshRetryTokenForRetry(
    previous: SinkRetryToken,
    info: SinkRetryErrorInfo,
  ): Promise<SinkRetryToken> {
    const retry = previous.getRetryCount() + 1;
    const retryable = info.errorType === 'THROTTLING' || info.errorType === 'TRANSIENT';
    // The SDK's own refusal message: its middleware throws the request's error instead.
    if (!retryable || retry >= this.#attempts) throw new Error('No retry token available');
    let delay = backoffDelay(SINK_REQUEST_POLICY, retry);
    if (info.retryAfterHint instanceof Date) {
      delay = Math.max(
        delay,
        Math.min(info.retryAfterHint.getTime() - Date.now(), delay + RETRY_AFTER_CAP_MS),
      );
    }
    return token(retry, delay);
  }

  recordSuccess(): void {}
}

function token(retryCount: number, delay: number): SinkRetryToken {
  return { getRetryCount: () => retryCount, getRetryDelay: () => delay };
}
