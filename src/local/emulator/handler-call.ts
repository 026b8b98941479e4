import type { Context } from 'aws-lambda';
import { HandlerTimeoutError } from './errors.js';

export interface HandlerCallOptions {
  timeoutMs: number;
  /** How long to wait at most for a timed-out call to settle (see `timedOutSettleMs`). */
  timedOutSettleMs: number;
  /** Named in the timeout's message. */
  firstSequenceNumber: string;
}

export type HandlerCallResult = { value: unknown } | { outcome: 'function-error' | 'timeout'; error: string };

/** A timed-out handler call still running past the settle cap (see `timedOutSettleMs`). */
const STILL_RUNNING = Symbol('still-running');

/**
 * One invocation of a handler as Lambda makes it: its return value, a thrown error, or the
 * function's timeout. Lambda kills a timed-out runtime, so its retry never overlaps the old call;
 * Node cannot kill a promise, so the call is awaited (up to `timedOutSettleMs`) before returning.
 */
export async function callHandler(
  handler: (event: never, context: Context) => unknown,
  event: unknown,
  context: Context,
  options: HandlerCallOptions,
): Promise<HandlerCallResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new HandlerTimeoutError(options.timeoutMs, options.firstSequenceNumber)),
      options.timeoutMs,
    );
  });
  const running = Promise.resolve().then(() => handler(event as never, context));
  try {
    const value = await Promise.race([running, timeout]);
    return { value };
  } catch (error) {
    if (error instanceof HandlerTimeoutError) {
      const settled = await settleTimedOut(running, options.timedOutSettleMs);
      return {
        outcome: 'timeout',
        error: settled
          ? error.message
          : `${error.message}; still running after ${options.timedOutSettleMs} ms more, the retry overlaps it`,
      };
    }
    return {
      outcome: 'function-error',
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Waits (capped) for an abandoned call to finish; false when it is still running at the cap. */
async function settleTimedOut(running: Promise<unknown>, capMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<typeof STILL_RUNNING>((resolve) => {
    timer = setTimeout(() => resolve(STILL_RUNNING), capMs);
  });
  try {
    const outcome = await Promise.race([
      running.then(
        () => undefined,
        () => undefined,
      ),
      cap,
    ]);
    return outcome !== STILL_RUNNING;
  } finally {
    clearTimeout(timer);
  }
}
