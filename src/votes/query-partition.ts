import { type AttributeValue, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { PollContext } from './options.js';
import { countedRequest } from './retry.js';
import { addCapacity, type RequestStats } from './stats.js';

/** Every item of one partition key, page by page (a registry or totals partition). */
export async function queryPartition(
  ctx: PollContext,
  pk: string,
  stats: RequestStats,
  options: { consistentRead: boolean; pageSize?: number | undefined },
  onItem: (item: Record<string, AttributeValue>) => void,
): Promise<void> {
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await countedRequest(
      ctx,
      stats,
      'query',
      () =>
        ctx.client.send(
          new QueryCommand({
            TableName: ctx.tableName,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': 'pk' },
            ExpressionAttributeValues: { ':pk': { S: pk } },
            ConsistentRead: options.consistentRead,
            ExclusiveStartKey: startKey,
            Limit: options.pageSize,
            ReturnConsumedCapacity: 'TOTAL',
          }),
        ),
      { operation: `Query ${pk}`, retryClass: 'idempotent' },
    );
    addCapacity(stats, 'read', page.ConsumedCapacity);
    for (const item of page.Items ?? []) onItem(item);
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
}
