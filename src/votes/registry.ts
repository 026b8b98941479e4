import { type AttributeValue, BatchWriteItemCommand, type WriteRequest } from '@aws-sdk/client-dynamodb';
import pLimit, { type LimitFunction } from 'p-limit';
import { PartialFailureError } from '../core/errors.js';
import { defineVoteOptions } from './errors.js';
import { ATTR, checkId } from './keys.js';
import type { PollContext } from './options.js';
import type { PollLayoutGuard } from './poll-config.js';
import { queryPartition } from './query-partition.js';
import { countedRequest } from './retry.js';
import { newRequestStats, type RequestStats } from './stats.js';

/** BatchWriteItem takes at most 25 put/delete requests (reference 003). */
const BATCH_WRITE_LIMIT = 25;
const REGISTER_CONCURRENCY = 4;

/** Options of listing a poll's contestants: the query page size. */
export interface ListContestantsOptions {
  /** Query page size (default: DynamoDB's 1 MB pages). */
  pageSize?: number;
}

const readListOptions = /* @__PURE__ */ defineVoteOptions<ListContestantsOptions>()('registry.list', {
  pageSize: { kind: 'integer', min: 1 },
});

/**
 * The contestants of one poll, so the aggregator knows what to sum without a Scan: one item per
 * contestant under `registryPartitions` partition keys, listed with a few paginated Queries.
 * Registration is a plain Put of a fixed item, so registering twice changes nothing.
 */
export class ContestantRegistry {
  constructor(
    private readonly ctx: PollContext,
    private readonly layout: PollLayoutGuard,
  ) {}

  /**
   * Registers one contestant or many (idempotent). Returns how many distinct ids were written.
   * Also records the poll's layout (shards, registryPartitions) the first time, or throws
   * InvalidVoteOptionsError if the poll was registered with other numbers.
   */
  async register(contestants: string | Iterable<string>): Promise<number> {
    const distinct = new Set<string>();
    // A string is iterable too: without this, 'alice' would register 'a', 'l', 'i', 'c', 'e'.
    const ids = typeof contestants === 'string' ? [contestants] : contestants;
    for (const contestant of ids) distinct.add(checkId('contestant', contestant));
    await this.layout.ensure();
    const requests: WriteRequest[] = [];
    for (const contestant of distinct) {
      const key = this.ctx.keys.registry(contestant);
      requests.push({ PutRequest: { Item: { ...key, [ATTR.contestant]: { S: contestant } } } });
    }
    const limit = pLimit(REGISTER_CONCURRENCY);
    const stats = newRequestStats();
    const chunks: WriteRequest[][] = [];
    for (let i = 0; i < requests.length; i += BATCH_WRITE_LIMIT)
      chunks.push(requests.slice(i, i + BATCH_WRITE_LIMIT));
    await Promise.all(chunks.map((chunk) => limit(() => this.writeChunk(chunk, stats))));
    return distinct.size;
  }

  /** Every registered contestant id (strongly consistent, so a just-registered one is included). */
  async list(options: ListContestantsOptions = {}): Promise<string[]> {
    return listContestants(this.ctx, newRequestStats(), options);
  }

  private async writeChunk(chunk: WriteRequest[], stats: RequestStats): Promise<void> {
    let pending = chunk;
    await countedRequest(
      this.ctx,
      stats,
      'batchWriteItem',
      async () => {
        const result = await this.ctx.client.send(
          new BatchWriteItemCommand({ RequestItems: { [this.ctx.tableName]: pending } }),
        );
        const unprocessed = result.UnprocessedItems?.[this.ctx.tableName] ?? [];
        if (unprocessed.length > 0) {
          pending = unprocessed;
          throw new PartialFailureError(unprocessed.length);
        }
      },
      // Puts of a fixed item: sending one twice is harmless.
      { operation: 'BatchWriteItem (register contestants)', retryClass: 'idempotent' },
    );
  }
}

/**
 * `limit` is the caller's request limiter (the aggregator's `concurrency`): without it all
 * `registryPartitions` (up to 100) Queries would be in flight at once, whatever the caller allows.
 */
export async function listContestants(
  ctx: PollContext,
  stats: RequestStats,
  options: ListContestantsOptions = {},
  limit: LimitFunction = pLimit(ctx.registryPartitions),
): Promise<string[]> {
  const { pageSize } = readListOptions(options);
  const perPartition = await Promise.all(
    ctx.keys.registryPartitionKeys().map(async (pk) => {
      const found: string[] = [];
      await limit(() =>
        queryPartition(
          ctx,
          pk,
          stats,
          { consistentRead: true, pageSize },
          (item: Record<string, AttributeValue>) => {
            const contestant = item[ATTR.contestant]?.S;
            if (contestant !== undefined) found.push(contestant);
          },
        ),
      );
      return found;
    }),
  );
  return perPartition.flat();
}
