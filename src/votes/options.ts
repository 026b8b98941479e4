import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { RETRY_POLICIES } from '../core/backoff.js';
import type { InvalidOptionsError } from '../core/errors.js';
import type { ResolvedOptions } from '../core/options.js';
import { defineVoteOptions } from './errors.js';
import { PollKeys } from './keys.js';

/** One partition takes about 1,000 writes per second (reference 004). */
export const WRITES_PER_PARTITION = 1_000;
export const MAX_SHARDS = 1_000;
export const MAX_REGISTRY_PARTITIONS = 100;
export const DEFAULT_REGISTRY_PARTITIONS = 4;
export const DEFAULT_HEADROOM = 1.25;
/** 10,000 votes/s per contestant; writers, aggregator and readers that all omit `shards` agree. */
export const DEFAULT_SHARDS = 10;

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

/** What every votes API reads of PollOptions (core/options rules); cross-key rules are resolvePollContext's. */
export const POLL_OPTIONS = {
  tableName: { kind: 'nonEmptyString', required: true },
  poll: { kind: 'nonEmptyString', required: true },
  shards: { kind: 'integer', min: 1, max: MAX_SHARDS },
  peakWritesPerSecond: { kind: 'number' },
  headroom: { kind: 'number' },
  registryPartitions: {
    kind: 'integer',
    min: 1,
    max: MAX_REGISTRY_PARTITIONS,
    default: DEFAULT_REGISTRY_PARTITIONS,
  },
  // Duck-typed: an application may bundle its own copy of the SDK, so instanceof would lie.
  dynamodb: { kind: 'object', methods: ['send'], expected: 'a DynamoDBClient (with send())' },
  maxAttempts: { kind: 'integer', min: 1, max: 100, default: RETRY_POLICIES.voteRequest.attempts },
} as const;

export type ResolvedPollOptions = ResolvedOptions<PollOptions, typeof POLL_OPTIONS>;

/** Where a votes API's option failures come from: its reader's `fail`. */
type Fail = (detail: string, option?: string) => InvalidOptionsError;

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

const readPeak = /* @__PURE__ */ defineVoteOptions<{ peakWritesPerSecond: number; headroom?: number }>()(
  'shardsForPeak',
  {
    peakWritesPerSecond: {
      kind: 'custom',
      expected: 'a positive number',
      check: (v) => typeof v === 'number' && Number.isFinite(v) && v > 0,
      required: true,
    },
    headroom: { kind: 'number', min: 1, default: DEFAULT_HEADROOM },
  },
);

/** N shards for a peak rate: one partition per 1,000 writes/s, with headroom (reference 004). */
export function shardsForPeak(peakWritesPerSecond: number, headroom = DEFAULT_HEADROOM): number {
  return peakShards(readPeak({ peakWritesPerSecond, headroom }), readPeak.fail);
}

function peakShards(o: { peakWritesPerSecond: number; headroom: number }, fail: Fail): number {
  const shards = Math.max(1, Math.ceil((o.peakWritesPerSecond * o.headroom) / WRITES_PER_PARTITION));
  if (shards > MAX_SHARDS) {
    throw fail(
      `option 'peakWritesPerSecond' needs ${shards} shards; at most ${MAX_SHARDS}`,
      'peakWritesPerSecond',
    );
  }
  return shards;
}

/** Letters, digits, `.`, `_`, `-`: no key separator (`#`), no IAM wildcard (`*`, `?`). */
export const POLL_ID_PATTERN = /^[A-Za-z0-9._-]+$/;
export const MAX_POLL_ID_LENGTH = 256;

/**
 * Validates a poll id (also the POLL environment variable at the handler's cold start); `name`
 * is the option or variable, named in the message.
 */
export function checkPollId(poll: string, name: string, fail: Fail, noun = 'option'): string {
  if (poll.includes('#')) throw fail(`${noun} '${name}' must not contain \`#\` (the key separator)`, name);
  if (!POLL_ID_PATTERN.test(poll)) {
    throw fail(
      `${noun} '${name}' must match ${POLL_ID_PATTERN.source} (\`*\` or \`?\` would widen the aggregator's IAM condition to other polls), got ${JSON.stringify(poll)}`,
      name,
    );
  }
  if (poll.length > MAX_POLL_ID_LENGTH) {
    throw fail(`${noun} '${name}' must be at most ${MAX_POLL_ID_LENGTH} characters`, name);
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

/** The poll options a votes API read with POLL_OPTIONS, with the rules that span keys applied. */
export function resolvePollContext(
  o: ResolvedPollOptions,
  reader: { readonly where: string; fail: Fail },
): PollContext {
  const fail = reader.fail;
  const poll = checkPollId(o.poll, 'poll', fail);
  let shards: number;
  if (o.shards !== undefined) {
    if (o.peakWritesPerSecond !== undefined || o.headroom !== undefined) {
      throw fail("option 'shards': give either 'shards' or 'peakWritesPerSecond' (+ 'headroom')", 'shards');
    }
    shards = o.shards;
  } else if (o.peakWritesPerSecond !== undefined) {
    const peak = { peakWritesPerSecond: o.peakWritesPerSecond, headroom: o.headroom };
    shards = peakShards(readPeak(peak, reader.where), fail);
  } else {
    if (o.headroom !== undefined)
      throw fail("option 'headroom' only applies together with 'peakWritesPerSecond'", 'headroom');
    shards = DEFAULT_SHARDS;
  }
  return {
    client: o.dynamodb ?? defaultDynamoDbClient(),
    tableName: o.tableName,
    poll,
    shards,
    registryPartitions: o.registryPartitions,
    maxAttempts: o.maxAttempts,
    keys: new PollKeys(poll, o.registryPartitions),
  };
}
