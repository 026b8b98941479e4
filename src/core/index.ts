// The kernel every folder shares: the error base, the one options reader and the retry policies.
// It depends on nothing of tidewater's, so records, sinks, votes, logging and local depend on it
// instead of on each other. Hot paths import ./backoff.js directly (no p-retry in a bundle).
export type { RetryPolicy, RetryPolicyName } from './backoff.js';
export { backoffDelay, RETRY_POLICIES, waitBeforeRetry, withAttempts } from './backoff.js';
export type { RecordIdentity } from './errors.js';
export {
  describeError,
  InvalidOptionsError,
  PartialFailureError,
  RecordError,
  recordLabel,
  TidewaterError,
} from './errors.js';
export type {
  Environment,
  EnvironmentReader,
  OptionErrorFactory,
  OptionReader,
  OptionRule,
  OptionSpecs,
  ResolvedOptions,
} from './options.js';
export { defineEnvironment, defineOptions, describe } from './options.js';
export type { RetryRun } from './retry.js';
export { withRetry } from './retry.js';
