import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';

/** Request counters of one run (one per call, never module-level). */
export interface RequestStats {
  query: number;
  batchGetItem: number;
  batchWriteItem: number;
  updateItem: number;
  /** Retries after a throttle or transient failure. */
  retries: number;
  /** Retries of BatchGetItem / BatchWriteItem work DynamoDB handed back unprocessed. */
  unprocessedRetries: number;
  readCapacityUnits: number;
  writeCapacityUnits: number;
}

export function newRequestStats(): RequestStats {
  return {
    query: 0,
    batchGetItem: 0,
    batchWriteItem: 0,
    updateItem: 0,
    retries: 0,
    unprocessedRetries: 0,
    readCapacityUnits: 0,
    writeCapacityUnits: 0,
  };
}

export function addCapacity(
  stats: RequestStats,
  kind: 'read' | 'write',
  consumed: ConsumedCapacity | readonly ConsumedCapacity[] | undefined,
): void {
  if (consumed === undefined) return;
  const list = Array.isArray(consumed) ? consumed : [consumed as ConsumedCapacity];
  let units = 0;
  for (const c of list) units += c.CapacityUnits ?? 0;
  if (kind === 'read') stats.readCapacityUnits += units;
  else stats.writeCapacityUnits += units;
}
