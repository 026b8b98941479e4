/**
 * The `tidewater/votes` entry point.
 * @module tidewater/votes
 */
export { type AggregateVotesOptions, type AggregationLogger, aggregateVotes } from './aggregate.js';
export {
  type CastVoteOptions,
  type CastVoteResult,
  type ReadOptions,
  VoteCounter,
  type VoteCounterOptions,
  type VoteTotal,
} from './counter.js';
export {
  AggregationIncompleteError,
  CorruptCounterError,
  InvalidVoteError,
  InvalidVoteOptionsError,
  VoteRequestFailedError,
} from './errors.js';
export { type PollOptions, shardsForPeak } from './options.js';
export type { ContestantRegistry, ListContestantsOptions } from './registry.js';
export { type AggregationSummary, aggregationEmf, type EmfOptions } from './summary.js';
