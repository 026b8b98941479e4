import {
  type AttributeValue,
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import pLimit from 'p-limit';
import { PartialFailureError } from '../core/errors.js';
import { planBatches } from './batch-plan.js';
import { readCount } from './count.js';
import { AggregationIncompleteError, defineVoteOptions } from './errors.js';
import { ATTR, type ItemKey } from './keys.js';
import { POLL_OPTIONS, type PollContext, type PollOptions, resolvePollContext } from './options.js';
import { checkPollLayout, readPollLayout } from './poll-config.js';
import { listContestants } from './registry.js';
import { countedRequest } from './retry.js';
import { addCapacity, newRequestStats, type RequestStats } from './stats.js';
import type { AggregationSummary } from './summary.js';

export const DEFAULT_AGGREGATION_CONCURRENCY = 8;

/** pino's `logger.info(fields, message)` shape, so a pino logger fits as is. */
export interface AggregationLogger {
  info(fields: AggregationSummary, message: string): void;
}

/** Options of aggregateVotes: the poll's layout, concurrency and summary output. */
export interface AggregateVotesOptions extends PollOptions {
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  /** Receives the summary once per run, also when the run then throws AggregationIncompleteError. */
  logger?: AggregationLogger;
}

const readOptions = /* @__PURE__ */ defineVoteOptions<AggregateVotesOptions>()('aggregateVotes', {
  ...POLL_OPTIONS,
  concurrency: { kind: 'integer', min: 1, max: 256, default: DEFAULT_AGGREGATION_CONCURRENCY },
  logger: { kind: 'object', methods: ['info'], expected: 'a logger with an info(fields, message) method' },
});
const READ_NAMES = { '#pk': ATTR.pk, '#sk': ATTR.sk, '#votes': ATTR.votes, '#total': ATTR.total };
const WRITE_NAMES = { '#total': ATTR.total, '#contestant': ATTR.contestant, '#updatedAt': ATTR.updatedAt };
// Counts only grow, so a higher sum is always the newer one: a slower run that read older shard
// values computes a sum no higher than what a later run saw and can never overwrite it.
const NEWER_ONLY = 'attribute_not_exists(#total) OR #total < :total';

/**
 * Recomputes every registered contestant's total from its shards and publishes the ones that
 * changed. Per run: a few Queries for the registry, ceil(C·(S+1)/100) strongly consistent
 * BatchGetItem calls (plus retries of UnprocessedKeys), and one conditional UpdateItem per
 * changed total. Safe to run twice or concurrently: it only ever raises a total to a sum it read.
 * First it reads the poll's recorded layout (one GetItem) and throws InvalidVoteOptionsError if
 * `shards` / `registryPartitions` differ from what the writers recorded.
 */
export async function aggregateVotes(options: AggregateVotesOptions): Promise<AggregationSummary> {
  const o = readOptions(options);
  const ctx = resolvePollContext(o, readOptions);
  const { concurrency, logger } = o;
  const started = performance.now();
  const stats = newRequestStats();

  // Summing with another shard count than the writers' would publish an undercount, silently.
  const layout = await readPollLayout(ctx);
  if (layout !== undefined) checkPollLayout(ctx, layout, 'aggregateVotes');
  // One limiter for the whole run: the registry Queries count against `concurrency` too.
  const limit = pLimit(concurrency);
  const contestants = await listContestants(ctx, stats, {}, limit);
  const shards = ctx.shards;
  const plan = planBatches(contestants.length, shards);
  const C = contestants.length;
  const sums = new Array<bigint>(C).fill(0n);
  const published = new Array<bigint | undefined>(C).fill(undefined);
  const remaining = new Array<number>(C).fill(plan.itemsPerContestant);
  const failed = new Set<number>();
  let firstFailure: unknown;
  const outcome = { written: 0, unchanged: 0, superseded: 0 };
  const now = new Date().toISOString();

  const keyOf = (slot: number): ItemKey => {
    const contestant = contestants[Math.floor(slot / plan.itemsPerContestant)]!;
    const item = slot % plan.itemsPerContestant;
    return item === shards ? ctx.keys.total(contestant) : ctx.keys.shard(contestant, item);
  };

  const fail = (index: number, error: unknown) => {
    failed.add(index);
    firstFailure ??= error;
  };

  const publish = async (index: number): Promise<void> => {
    const sum = sums[index]!;
    const current = published[index];
    if (current !== undefined && sum <= current) {
      // Equal: nothing to do. Lower: a concurrent run read newer shard values and published them.
      if (sum === current) outcome.unchanged++;
      else outcome.superseded++;
      return;
    }
    const contestant = contestants[index]!;
    try {
      const result = await countedRequest(
        ctx,
        stats,
        'updateItem',
        () =>
          ctx.client.send(
            new UpdateItemCommand({
              TableName: ctx.tableName,
              Key: ctx.keys.total(contestant),
              UpdateExpression: 'SET #total = :total, #contestant = :contestant, #updatedAt = :now',
              ConditionExpression: NEWER_ONLY,
              ExpressionAttributeNames: WRITE_NAMES,
              ExpressionAttributeValues: {
                ':total': { N: sum.toString() },
                ':contestant': { S: contestant },
                ':now': { S: now },
              },
              ReturnConsumedCapacity: 'TOTAL',
            }),
          ),
        // A conditional SET of a fixed value: repeating it cannot change the outcome.
        { operation: `UpdateItem total of ${contestant}`, retryClass: 'idempotent' },
      );
      addCapacity(stats, 'write', result.ConsumedCapacity);
      outcome.written++;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) outcome.superseded++;
      else fail(index, error);
    }
  };

  const runBatch = async (batch: number): Promise<void> => {
    const [start, end] = plan.range(batch);
    const slotByKey = new Map<string, number>();
    const keys: ItemKey[] = [];
    for (let slot = start; slot < end; slot++) {
      const key = keyOf(slot);
      keys.push(key);
      slotByKey.set(`${key.pk.S}\u0000${key.sk.S}`, slot);
    }
    let items: Record<string, AttributeValue>[] = [];
    try {
      items = await readBatch(ctx, keys, stats);
    } catch (error) {
      for (let slot = start; slot < end; slot++) fail(Math.floor(slot / plan.itemsPerContestant), error);
    }
    for (const item of items) {
      const pk = item[ATTR.pk]?.S ?? '';
      const sk = item[ATTR.sk]?.S ?? '';
      const slot = slotByKey.get(`${pk}\u0000${sk}`);
      if (slot === undefined) continue;
      const index = Math.floor(slot / plan.itemsPerContestant);
      try {
        if (slot % plan.itemsPerContestant === shards) {
          if (item[ATTR.total] !== undefined) published[index] = readCount(item[ATTR.total], pk, sk);
        } else {
          sums[index]! += readCount(item[ATTR.votes], pk, sk);
        }
      } catch (error) {
        fail(index, error);
      }
    }
    const completed: number[] = [];
    for (let slot = start; slot < end; slot++) {
      const index = Math.floor(slot / plan.itemsPerContestant);
      remaining[index]!--;
      if (remaining[index] === 0 && !failed.has(index)) completed.push(index);
    }
    for (const index of completed) await publish(index);
  };

  await Promise.all(Array.from({ length: plan.batches }, (_, batch) => limit(() => runBatch(batch))));

  const summary: AggregationSummary = {
    poll: ctx.poll,
    contestants: C,
    shards,
    shardsRead: C * shards,
    totalsWritten: outcome.written,
    totalsUnchanged: outcome.unchanged,
    totalsSuperseded: outcome.superseded,
    failedContestants: failed.size,
    requests: { query: stats.query, batchGetItem: stats.batchGetItem, updateItem: stats.updateItem },
    retries: stats.retries,
    unprocessedRetries: stats.unprocessedRetries,
    consumedReadCapacityUnits: stats.readCapacityUnits,
    consumedWriteCapacityUnits: stats.writeCapacityUnits,
    durationMs: Math.round(performance.now() - started),
  };
  logger?.info(summary, 'votes aggregated');
  if (failed.size > 0) {
    const names = [...failed].sort((a, b) => a - b).map((index) => contestants[index]!);
    throw new AggregationIncompleteError(ctx.poll, names, summary, { cause: firstFailure });
  }
  return summary;
}

/** One BatchGetItem of ≤ 100 keys, re-sending UnprocessedKeys with backoff until all are read. */
async function readBatch(
  ctx: PollContext,
  keys: ItemKey[],
  stats: RequestStats,
): Promise<Record<string, AttributeValue>[]> {
  let pending: Record<string, AttributeValue>[] = keys;
  const items: Record<string, AttributeValue>[] = [];
  await countedRequest(
    ctx,
    stats,
    'batchGetItem',
    async () => {
      const result = await ctx.client.send(
        new BatchGetItemCommand({
          RequestItems: {
            [ctx.tableName]: {
              Keys: pending,
              ConsistentRead: true,
              ProjectionExpression: '#pk, #sk, #votes, #total',
              ExpressionAttributeNames: READ_NAMES,
            },
          },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      addCapacity(stats, 'read', result.ConsumedCapacity);
      for (const item of result.Responses?.[ctx.tableName] ?? []) items.push(item);
      const unprocessed = result.UnprocessedKeys?.[ctx.tableName]?.Keys ?? [];
      if (unprocessed.length > 0) {
        pending = unprocessed;
        throw new PartialFailureError(unprocessed.length);
      }
    },
    { operation: `BatchGetItem (${keys.length} keys)`, retryClass: 'idempotent' },
  );
  return items;
}
