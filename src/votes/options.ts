import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvalidVoteOptionsError } from './errors.js';
import { PollKeys } from './keys.js';

/** One partition takes about 1,000 writes per second (reference 004). */
export const WRITES_PER_PARTITION = 1_000;
export const MAX_SHARDS = 1_000;
export const MAX_REGISTRY_PARTITIONS = 100;
export const DEFAULT_REGISTRY_PARTITIONS = 4;
export const DEFAULT_HEADROOM = 1.25;
/** 10,000 votes/s per contestant; writers, aggregator and readers that all omit `shards` agree. */
export const DEFAULT_SHARDS = 10;
export const DEFAULT_MAX_ATTEMPTS = 8;

/** What writer, aggregator and reader must agree on: the poll's place in the table. */
export interface PollOptions {
  /** Table with a string hash key `pk` and a string range key `sk`. */
  tableName: string;
  /**
   * Poll id; several polls share one table. Letters, digits, `.`, `_` and `-` only: `#` is the
   * key separator, and IAM reads `*` / `?` in the aggregator's LeadingKeys condition as wildcards.
   */
  poll: string;
  /** Shard items per contestant (default 10). Give this or `peakWritesPerSecond`, not both. */
  shards?: number;
  /** Expected peak votes per second for one contestant; shards = ceil(peak × headroom / 1,000). */
  peakWritesPerSecond?: number;
  /** Multiplier on `peakWritesPerSecond` (default 1.25). */
  headroom?: number;
  /** Partition keys the registry and the total items are spread over (default 4). */
  registryPartitions?: number;
  /**
   * Defaults to `defaultDynamoDbClient()`: `new DynamoDBClient({ maxAttempts: 1 })`, which honours
   * AWS_ENDPOINT_URL_DYNAMODB. Give an injected client `maxAttempts: 1` too: the votes code does
   * its own retrying, and the SDK's would resend a non-idempotent ADD after a 5xx or timeout
   * (counting a vote twice) and multiply the attempts (8 × 3).
   */
  dynamodb?: DynamoDBClient;
  /** Attempts per request for retryable failures (throttling, unprocessed keys); default 8. */
  maxAttempts?: number;
}

const POLL_OPTION_KEYS = [
  'tableName',
  'poll',
  'shards',
  'peakWritesPerSecond',
  'headroom',
  'registryPartitions',
  'dynamodb',
  'maxAttempts',
] as const;

/** Resolved, validated, with keys precomputed: built once per counter / aggregation run. */
export interface PollContext {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly poll: string;
  readonly shards: number;
  readonly registryPartitions: number;
  readonly maxAttempts: number;
  readonly keys: PollKeys;
}

/** N shards for a peak rate: one partition per 1,000 writes/s, with headroom (reference 004). */
export function shardsForPeak(peakWritesPerSecond: number, headroom = DEFAULT_HEADROOM): number {
  if (!(Number.isFinite(peakWritesPerSecond) && peakWritesPerSecond > 0)) {
    throw new InvalidVoteOptionsError(
      'peakWritesPerSecond',
      `must be a positive number, got ${peakWritesPerSecond}`,
    );
  }
  if (!(Number.isFinite(headroom) && headroom >= 1)) {
    throw new InvalidVoteOptionsError('headroom', `must be a number >= 1, got ${headroom}`);
  }
  const shards = Math.max(1, Math.ceil((peakWritesPerSecond * headroom) / WRITES_PER_PARTITION));
  if (shards > MAX_SHARDS) {
    throw new InvalidVoteOptionsError('peakWritesPerSecond', `needs ${shards} shards; at most ${MAX_SHARDS}`);
  }
  return shards;
}

/** Letters, digits, `.`, `_`, `-`: no key separator (`#`), no IAM wildcard (`*`, `?`). */
export const POLL_ID_PATTERN = /^[A-Za-z0-9._-]+$/;
export const MAX_POLL_ID_LENGTH = 256;

/** Validates a poll id (also used for the POLL environment variable at the handler's cold start). */
export function checkPollId(name: string, value: unknown): string {
  const poll = nonEmptyString(name, value);
  if (poll.includes('#')) throw new InvalidVoteOptionsError(name, 'must not contain `#` (the key separator)');
  if (!POLL_ID_PATTERN.test(poll)) {
    throw new InvalidVoteOptionsError(
      name,
      `must match ${POLL_ID_PATTERN.source} (\`*\` or \`?\` would widen the aggregator's IAM condition to other polls), got ${JSON.stringify(poll)}`,
    );
  }
  if (poll.length > MAX_POLL_ID_LENGTH) {
    throw new InvalidVoteOptionsError(name, `must be at most ${MAX_POLL_ID_LENGTH} characters`);
  }
  return poll;
}

/**
 * The client the votes code builds when none is injected. `maxAttempts: 1` because withRetries
 * does the retrying, knowing which requests are safe to resend; SDK retries would resend a bare
 * ADD after an ambiguous failure.
 */
export function defaultDynamoDbClient(): DynamoDBClient {
  return new DynamoDBClient({ maxAttempts: 1 });
}

export function rejectUnknownKeys(options: object, allowed: readonly string[], where: string): void {
  if (options === null || typeof options !== 'object') {
    throw new InvalidVoteOptionsError(where, 'options must be an object');
  }
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      throw new InvalidVoteOptionsError(
        key,
        `unknown option for ${where}; expected one of ${allowed.join(', ')}`,
      );
    }
  }
}

export function positiveInteger(name: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new InvalidVoteOptionsError(name, `must be an integer in [1, ${max}], got ${String(value)}`);
  }
  return value;
}

function nonEmptyString(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidVoteOptionsError(name, 'must be a non-empty string');
  }
  return value;
}

/** Validates the poll options shared by every votes API; `extraKeys` are the caller's own. */
export function resolvePollContext(
  options: PollOptions,
  where: string,
  extraKeys: readonly string[] = [],
): PollContext {
  rejectUnknownKeys(options, [...POLL_OPTION_KEYS, ...extraKeys], where);
  const tableName = nonEmptyString('tableName', options.tableName);
  const poll = checkPollId('poll', options.poll);
  let shards: number;
  if (options.shards !== undefined) {
    if (options.peakWritesPerSecond !== undefined || options.headroom !== undefined) {
      throw new InvalidVoteOptionsError(
        'shards',
        'give either `shards` or `peakWritesPerSecond` (+ `headroom`)',
      );
    }
    shards = positiveInteger('shards', options.shards, 1, MAX_SHARDS);
  } else if (options.peakWritesPerSecond !== undefined) {
    shards = shardsForPeak(options.peakWritesPerSecond, options.headroom ?? DEFAULT_HEADROOM);
  } else {
    if (options.headroom !== undefined) {
      throw new InvalidVoteOptionsError('headroom', 'only applies together with `peakWritesPerSecond`');
    }
    shards = DEFAULT_SHARDS;
  }
  const registryPartitions = positiveInteger(
    'registryPartitions',
    options.registryPartitions,
    DEFAULT_REGISTRY_PARTITIONS,
    MAX_REGISTRY_PARTITIONS,
  );
  const maxAttempts = positiveInteger('maxAttempts', options.maxAttempts, DEFAULT_MAX_ATTEMPTS, 100);
  // Duck-typed: an application may bundle its own copy of the SDK, so instanceof would lie.
  if (options.dynamodb !== undefined && typeof (options.dynamodb as { send?: unknown }).send !== 'function') {
    throw new InvalidVoteOptionsError('dynamodb', 'must be a DynamoDBClient');
  }
  return {
    client: options.dynamodb ?? defaultDynamoDbClient(),
    tableName,
    poll,
    shards,
    registryPartitions,
    maxAttempts,
    keys: new PollKeys(poll, registryPartitions),
  };
}
