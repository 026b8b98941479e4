import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  GetItemCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { readCount, voteCountText } from './count.js';
import { defineVoteOptions } from './errors.js';
import { ATTR, checkId } from './keys.js';
import { POLL_OPTIONS, type PollContext, type PollOptions, resolvePollContext } from './options.js';
import { PollLayoutGuard } from './poll-config.js';
import { queryPartition } from './query-partition.js';
import { ContestantRegistry } from './registry.js';
import { withRetries } from './retry.js';
import { newRequestStats } from './stats.js';

/** Options of VoteCounter: the table and poll layout (shards, registry partitions). */
export type VoteCounterOptions = PollOptions;

/** Options of one castVote: exactly-once by voter id. */
export interface CastVoteOptions {
  /**
   * Exactly-once mode: the vote is recorded with a marker item for this id in the same
   * transaction as the shard ADD, so retrying the request never counts it twice. One id counts
   * once per poll (use `<user>#<contestant>` to allow one vote per contestant).
   */
  voterId?: string;
}

/** What castVote did: counted on a shard, or refused as a duplicate voter. */
export type CastVoteResult =
  | { status: 'counted'; shard: number }
  /** A vote with this voterId was already recorded (by an earlier request or a retry of this one). */
  | { status: 'duplicate' };

/** One contestant's total as the aggregator last wrote it. */
export interface VoteTotal {
  contestant: string;
  total: bigint;
  /** When the aggregator last changed this total (ISO 8601). */
  updatedAt: string | undefined;
}

/** Options of reading totals: consistent reads. */
export interface ReadOptions {
  /** Strongly consistent read (twice the read cost). Default false. */
  consistentRead?: boolean;
}

const readOptions = /* @__PURE__ */ defineVoteOptions<VoteCounterOptions>()('VoteCounter', POLL_OPTIONS);
const readCastOptions = /* @__PURE__ */ defineVoteOptions<CastVoteOptions>()('castVote', {
  voterId: { kind: 'string' },
});
const readReadOptions = /* @__PURE__ */ defineVoteOptions<ReadOptions>()('VoteCounter read', {
  consistentRead: { kind: 'boolean', default: false },
});

/** Cancellation reasons that mean "nothing was applied; send it again". */
const TRANSIENT_CANCEL_CODES = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);

function cancelCodes(error: unknown): string[] {
  if (!(error instanceof TransactionCanceledException)) return [];
  return (error.CancellationReasons ?? []).map((reason) => reason.Code ?? 'None');
}

function isTransientCancel(error: unknown): boolean {
  const codes = cancelCodes(error);
  return codes.some((code) => TRANSIENT_CANCEL_CODES.has(code)) && !codes.includes('ConditionalCheckFailed');
}

/**
 * Writer and reader of one poll's sharded vote counters (reference 004): votes go to one of N
 * shard items at random, the aggregator (`aggregateVotes`) folds the shards into one total item,
 * and readers read only that total.
 */
export class VoteCounter {
  readonly registry: ContestantRegistry;
  readonly shards: number;
  private readonly ctx: PollContext;
  private readonly layout: PollLayoutGuard;
  private readonly names = { '#votes': ATTR.votes };

  constructor(options: VoteCounterOptions) {
    this.ctx = resolvePollContext(readOptions(options), readOptions);
    this.shards = this.ctx.shards;
    this.layout = new PollLayoutGuard(this.ctx, 'VoteCounter');
    this.registry = new ContestantRegistry(this.ctx, this.layout);
  }

  /**
   * Adds `count` votes to a random shard of `contestant`. Without a voterId this is one UpdateItem
   * ADD: fast, but not idempotent (reference 003), so only throttles (never applied) are retried.
   * With a voterId it is a TransactWriteItems (marker put if absent + shard ADD), retried on any
   * transient failure because the marker makes a repeat harmless.
   * The contestant must be registered (`registry.register`) for the aggregator to see it.
   * The first call of a counter (castVote or registry.register) also records the poll's layout
   * (shards, registryPartitions) or checks it against the recorded one: one PutItem per counter,
   * failing with InvalidVoteOptionsError if another writer used other numbers.
   */
  async castVote(
    contestant: string,
    count: number | bigint = 1,
    options: CastVoteOptions = {},
  ): Promise<CastVoteResult> {
    checkId('contestant', contestant);
    const amount = voteCountText(count);
    const given = readCastOptions(options).voterId;
    const voterId = given === undefined ? undefined : checkId('voterId', given);
    await this.layout.ensure();
    const shard = Math.floor(Math.random() * this.ctx.shards);
    const shardKey = this.ctx.keys.shard(contestant, shard);
    const values: Record<string, AttributeValue> = { ':n': { N: amount } };

    if (voterId === undefined) {
      await withRetries(
        () =>
          this.ctx.client.send(
            new UpdateItemCommand({
              TableName: this.ctx.tableName,
              Key: shardKey,
              UpdateExpression: 'ADD #votes :n',
              ExpressionAttributeNames: this.names,
              ExpressionAttributeValues: values,
            }),
          ),
        { operation: `castVote ${contestant}`, attempts: this.ctx.maxAttempts, retryClass: 'not-idempotent' },
      );
      return { status: 'counted', shard };
    }

    const command = new TransactWriteItemsCommand({
      // One token for all our retries: if an attempt we saw fail had in fact committed, DynamoDB
      // answers the retry with success (for 10 minutes) instead of a duplicate.
      ClientRequestToken: randomUUID(),
      TransactItems: [
        {
          Put: {
            TableName: this.ctx.tableName,
            Item: {
              ...this.ctx.keys.marker(voterId),
              [ATTR.contestant]: { S: contestant },
              [ATTR.count]: { N: amount },
              [ATTR.castAt]: { S: new Date().toISOString() },
            },
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': ATTR.pk },
          },
        },
        {
          Update: {
            TableName: this.ctx.tableName,
            Key: shardKey,
            UpdateExpression: 'ADD #votes :n',
            ExpressionAttributeNames: this.names,
            ExpressionAttributeValues: values,
          },
        },
      ],
    });
    try {
      await withRetries(() => this.ctx.client.send(command), {
        operation: `castVote ${contestant} voter ${voterId}`,
        attempts: this.ctx.maxAttempts,
        retryClass: 'idempotent',
        alsoRetry: isTransientCancel,
      });
    } catch (error) {
      if (cancelCodes(error)[0] === 'ConditionalCheckFailed') return { status: 'duplicate' };
      throw error;
    }
    return { status: 'counted', shard };
  }

  /** The published total of one contestant (0n before the first aggregation). */
  async getTotal(contestant: string, options: ReadOptions = {}): Promise<bigint> {
    checkId('contestant', contestant);
    const { consistentRead } = readReadOptions(options, 'getTotal');
    const key = this.ctx.keys.total(contestant);
    const result = await withRetries(
      () =>
        this.ctx.client.send(
          new GetItemCommand({
            TableName: this.ctx.tableName,
            Key: key,
            ConsistentRead: consistentRead,
            ProjectionExpression: '#total',
            ExpressionAttributeNames: { '#total': ATTR.total },
          }),
        ),
      { operation: `getTotal ${contestant}`, attempts: this.ctx.maxAttempts, retryClass: 'idempotent' },
    );
    return readCount(result.Item?.[ATTR.total], key.pk.S, key.sk.S);
  }

  /** Every published total, highest first (the leaderboard): one paginated Query per partition. */
  async getTotals(options: ReadOptions = {}): Promise<VoteTotal[]> {
    const { consistentRead } = readReadOptions(options, 'getTotals');
    const stats = newRequestStats();
    const totals: VoteTotal[] = [];
    await Promise.all(
      this.ctx.keys.totalsPartitionKeys().map((pk) =>
        queryPartition(this.ctx, pk, stats, { consistentRead }, (item) => {
          const contestant = item[ATTR.contestant]?.S;
          if (contestant === undefined) return;
          totals.push({
            contestant,
            total: readCount(item[ATTR.total], pk, item[ATTR.sk]?.S ?? ''),
            updatedAt: item[ATTR.updatedAt]?.S,
          });
        }),
      ),
    );
    return totals.sort((a, b) =>
      a.total === b.total ? (a.contestant < b.contestant ? -1 : 1) : a.total > b.total ? -1 : 1,
    );
  }
}
