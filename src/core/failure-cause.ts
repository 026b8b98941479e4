import { describeError } from './errors.js';

/**
 * Why a stream handler reported a partial batch failure, carried on its response for a local run
 * to print (`tidewater start` / `replay`'s summary) beside the sequence number. A symbol key, not
 * enumerable: JSON.stringify, and so Lambda, never sees it. Symbol.for, so a handler bundled with
 * its own copy of tidewater and the CLI's copy agree on it.
 */
const FAILURE_CAUSE = Symbol.for('tidewater.failureCause');

/** The response with its failure's cause attached (`Name: message`); the response itself is returned. */
export function withFailureCause<T extends object>(response: T, cause: unknown): T {
  if (cause !== undefined)
    Object.defineProperty(response, FAILURE_CAUSE, { value: describeError(cause), enumerable: false });
  return response;
}

/** The cause withFailureCause attached, when the value is such a response. */
export function failureCauseOf(response: unknown): string | undefined {
  if (response === null || typeof response !== 'object') return undefined;
  const cause = (response as Record<symbol, unknown>)[FAILURE_CAUSE];
  return typeof cause === 'string' ? cause : undefined;
}
