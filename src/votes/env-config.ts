import type { AggregateVotesOptions } from './aggregate.js';
import { InvalidVoteOptionsError } from './errors.js';
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

function numberFrom(env: Record<string, string | undefined>, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isFinite(value))
    throw new InvalidVoteOptionsError(name, `must be a number, got ${JSON.stringify(text)}`);
  return value;
}

/**
 * Aggregator options from a Lambda environment. Values are validated by aggregateVotes itself
 * (the poll id here too); this turns text into numbers and leaves unset ones out so defaults apply.
 */
export function aggregatorOptionsFromEnv(env: Record<string, string | undefined>): AggregateVotesOptions {
  const options: AggregateVotesOptions = {
    tableName: env[AGGREGATOR_ENV.tableName] ?? '',
    poll: env[AGGREGATOR_ENV.poll] ?? '',
  };
  if (options.tableName === '') throw new InvalidVoteOptionsError(AGGREGATOR_ENV.tableName, 'is not set');
  if (options.poll === '') throw new InvalidVoteOptionsError(AGGREGATOR_ENV.poll, 'is not set');
  // At cold start, so a poll id that would widen the role's IAM condition fails the deploy's first init.
  checkPollId(AGGREGATOR_ENV.poll, options.poll);
  const numeric = [
    'shards',
    'peakWritesPerSecond',
    'headroom',
    'registryPartitions',
    'concurrency',
    'maxAttempts',
  ] as const;
  for (const key of numeric) {
    const value = numberFrom(env, AGGREGATOR_ENV[key]);
    if (value !== undefined) options[key] = value;
  }
  return options;
}
