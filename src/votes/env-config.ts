import type { Environment } from '../core/options.js';
import type { AggregateVotesOptions } from './aggregate.js';
import { defineVoteEnvironment } from './errors.js';
import { checkPollId } from './options.js';

/** Environment variables the aggregate-votes handler reads; anything else is ignored. */
export const AGGREGATOR_ENV = {
  tableName: 'TABLE_NAME',
  poll: 'POLL',
  shards: 'SHARDS',
  peakWritesPerSecond: 'PEAK_WRITES_PER_SECOND',
  headroom: 'HEADROOM',
  registryPartitions: 'REGISTRY_PARTITIONS',
  concurrency: 'CONCURRENCY',
  maxAttempts: 'MAX_ATTEMPTS',
} as const;

const NUMBER = { kind: 'number' } as const;

// Values are validated by aggregateVotes itself (ranges, shards vs peak); this turns text into
// numbers, refuses text that is none, and leaves unset ones out so defaults apply.
const readEnvironment = /* @__PURE__ */ defineVoteEnvironment<{
  TABLE_NAME: string;
  POLL: string;
  SHARDS?: number;
  PEAK_WRITES_PER_SECOND?: number;
  HEADROOM?: number;
  REGISTRY_PARTITIONS?: number;
  CONCURRENCY?: number;
  MAX_ATTEMPTS?: number;
}>()('aggregateVotes', {
  TABLE_NAME: { kind: 'nonEmptyString', required: true },
  POLL: { kind: 'nonEmptyString', required: true },
  SHARDS: NUMBER,
  PEAK_WRITES_PER_SECOND: NUMBER,
  HEADROOM: NUMBER,
  REGISTRY_PARTITIONS: NUMBER,
  CONCURRENCY: NUMBER,
  MAX_ATTEMPTS: NUMBER,
});

/** Aggregator options from a Lambda environment (AGGREGATOR_ENV names the variables). */
export function aggregatorOptionsFromEnv(env: Environment): AggregateVotesOptions {
  const e = readEnvironment(env);
  // At cold start, so a poll id that would widen the role's IAM condition fails the deploy's first init.
  checkPollId(e.POLL, AGGREGATOR_ENV.poll, readEnvironment.fail, 'environment variable');
  const options: AggregateVotesOptions = { tableName: e.TABLE_NAME, poll: e.POLL };
  const numeric = [
    'shards',
    'peakWritesPerSecond',
    'headroom',
    'registryPartitions',
    'concurrency',
    'maxAttempts',
  ] as const;
  for (const key of numeric) {
    const value = e[AGGREGATOR_ENV[key]];
    if (value !== undefined) options[key] = value;
  }
  return options;
}
