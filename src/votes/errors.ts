import { describeError, InvalidOptionsError, TidewaterError } from '../core/errors.js';
import { defineEnvironment, defineOptions, type OptionErrorFactory } from '../core/options.js';

/**
 * Options passed to a votes API are wrong (unknown key, bad value): fails at construction.
 * `option` names the key (or the environment variable).
 */
export class InvalidVoteOptionsError extends InvalidOptionsError {
  override name = 'InvalidVoteOptionsError';
  declare readonly option: string;
  constructor(option: string, message: string) {
    super(message, { option });
  }
}

const voteOptionError: OptionErrorFactory = (message, option) =>
  new InvalidVoteOptionsError(option ?? '', message);

/** core/options' reader, throwing InvalidVoteOptionsError. */
export function defineVoteOptions<O extends object>() {
  return defineOptions<O>({ error: voteOptionError });
}

/** core/options' environment reader, throwing InvalidVoteOptionsError. */
export function defineVoteEnvironment<O extends object>() {
  return defineEnvironment<O>({ error: voteOptionError });
}

/** A single vote (or registration) carries a value the counter cannot store. */
export class InvalidVoteError extends TidewaterError {
  override name = 'InvalidVoteError';
  constructor(
    readonly field: 'contestant' | 'count' | 'voterId',
    detail: string,
  ) {
    super(`invalid vote ${field}: ${detail}`);
  }
}

/**
 * A counter item holds something other than a whole number. Summing around it would publish a
 * wrong total, so the contestant is left alone and the item's key is named.
 */
export class CorruptCounterError extends TidewaterError {
  override name = 'CorruptCounterError';
  constructor(
    readonly pk: string,
    readonly sk: string,
    detail: string,
  ) {
    super(`counter item pk=${pk} sk=${sk} is not a whole-number count: ${detail}`);
  }
}

/** A request kept failing after every retry; `attempts` says how many were made. */
export class VoteRequestFailedError extends TidewaterError {
  override name = 'VoteRequestFailedError';
  constructor(
    readonly operation: string,
    readonly attempts: number,
    options: { cause: unknown },
  ) {
    super(`${operation} failed after ${attempts} attempt(s): ${describeError(options.cause)}`, options);
  }
}

/**
 * An aggregation run finished but could not recompute every contestant. Totals it did write are
 * correct; the listed contestants keep their previous total until the next run.
 */
export class AggregationIncompleteError extends TidewaterError {
  override name = 'AggregationIncompleteError';
  constructor(
    readonly poll: string,
    readonly failedContestants: readonly string[],
    readonly summary: unknown,
    options: { cause: unknown },
  ) {
    super(
      `aggregation of poll ${poll} left ${failedContestants.length} contestant(s) unchanged ` +
        `(first: ${failedContestants.slice(0, 5).join(', ')}): ${describeError(options.cause)}`,
      options,
    );
  }
}
