import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { InvalidVoteError } from './errors.js';

/** Attribute names the votes items use; infra and docs/votes.md name the same ones. */
export const ATTR = {
  pk: 'pk',
  sk: 'sk',
  votes: 'votes',
  total: 'total',
  contestant: 'contestant',
  updatedAt: 'updatedAt',
  count: 'count',
  castAt: 'castAt',
  shards: 'shards',
  registryPartitions: 'registryPartitions',
} as const;

export const SHARD_SK = 'COUNT';
export const MARKER_SK = 'MARKER';
export const CONFIG_SK = 'CONFIG';
const CONTESTANT_SK_PREFIX = 'CONTESTANT#';
/** Keys are capped at 2,048 bytes (pk) and 1,024 bytes (sk); this leaves room for the prefixes. */
const MAX_ID_BYTES = 900;

export type ItemKey = Record<'pk' | 'sk', AttributeValue.SMember>;

/**
 * The key layout of one poll (reference 004's PARENT#CHILD style), so several polls share a table:
 *   shard      pk POLL#<poll>#VOTE#<contestant>#<k>   sk COUNT              votes (N)
 *   total      pk POLL#<poll>#TOTALS#<b>              sk CONTESTANT#<c>     total (N), contestant, updatedAt
 *   registry   pk POLL#<poll>#REGISTRY#<b>            sk CONTESTANT#<c>     contestant
 *   marker     pk POLL#<poll>#VOTER#<voterId>         sk MARKER             contestant, count, castAt
 *   config     pk POLL#<poll>#CONFIG                  sk CONFIG             shards, registryPartitions
 * b = FNV-1a(contestant) mod registryPartitions, so the registry and the leaderboard are a few
 * Queries (no Scan) and their writes spread over several partitions. The shard index k is the
 * last `#` segment and is all digits, so a contestant id containing `#` cannot collide.
 */
export class PollKeys {
  private readonly prefix: string;
  private readonly registryPks: readonly string[];
  private readonly totalsPks: readonly string[];

  constructor(
    readonly poll: string,
    readonly partitions: number,
  ) {
    this.prefix = `POLL#${poll}#`;
    this.registryPks = Array.from({ length: partitions }, (_, b) => `${this.prefix}REGISTRY#${b}`);
    this.totalsPks = Array.from({ length: partitions }, (_, b) => `${this.prefix}TOTALS#${b}`);
  }

  bucketOf(contestant: string): number {
    return fnv1a(contestant) % this.partitions;
  }

  shard(contestant: string, k: number): ItemKey {
    return { pk: { S: `${this.prefix}VOTE#${contestant}#${k}` }, sk: { S: SHARD_SK } };
  }

  total(contestant: string): ItemKey {
    return {
      pk: { S: this.totalsPks[this.bucketOf(contestant)]! },
      sk: { S: `${CONTESTANT_SK_PREFIX}${contestant}` },
    };
  }

  registry(contestant: string): ItemKey {
    return {
      pk: { S: this.registryPks[this.bucketOf(contestant)]! },
      sk: { S: `${CONTESTANT_SK_PREFIX}${contestant}` },
    };
  }

  marker(voterId: string): ItemKey {
    return { pk: { S: `${this.prefix}VOTER#${voterId}` }, sk: { S: MARKER_SK } };
  }

  /** The poll's layout (shards, registryPartitions), written by writers and checked by the aggregator. */
  config(): ItemKey {
    return { pk: { S: `${this.prefix}CONFIG` }, sk: { S: CONFIG_SK } };
  }

  registryPartitionKeys(): readonly string[] {
    return this.registryPks;
  }

  totalsPartitionKeys(): readonly string[] {
    return this.totalsPks;
  }
}

/** 32-bit FNV-1a over UTF-16 code units: stable across runtimes, so a contestant keeps its bucket. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export function checkId(field: 'contestant' | 'voterId', value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidVoteError(field, 'must be a non-empty string');
  }
  if (Buffer.byteLength(value, 'utf8') > MAX_ID_BYTES) {
    throw new InvalidVoteError(field, `must be at most ${MAX_ID_BYTES} bytes of UTF-8`);
  }
  return value;
}
