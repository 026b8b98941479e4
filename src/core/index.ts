// The kernel every folder shares: the error base, the one options reader and the retry policies.
// It depends on nothing of tidewater's, so records, sinks, votes, logging and local depend on it
// instead of on each other. This barrel holds only what is imported through it; the rest is
// imported from its own file (retry.js loads p-retry, backoff.js is the hot paths' part of it).
export { InvalidOptionsError, TidewaterError } from './errors.js';
export { defineOptions, describe } from './options.js';
