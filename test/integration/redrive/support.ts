import { PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll } from 'vitest';
import type { FailureDestination } from '../../../src/local/emulator/destinations.js';
import { EventSourceMappingEmulator } from '../../../src/local/emulator/emulator.js';
import { StreamPoller } from '../../../src/local/emulator/poller.js';
import type { LambdaStreamRecord } from '../../../src/records/index.js';
import { readStreamRange } from '../../../src/redrive/read-range.js';
import type { DeadLetterEntry } from '../../../src/sinks/types.js';
import { createTestTable, localClients, startLocalSqs } from '../../support/aws.js';
import { DOCUMENTED } from '../../support/on-failure-record.js';

const { dynamodb, streams } = localClients();

/** Item state by pk, as a sink that stores the latest image would hold it. */
export type StateSink = Map<string, unknown>;

/** A handler that writes each record to the sink in order, throwing (or reporting) at a pk in `failAt`. */
export function sinkHandler(sink: StateSink, options: { failAt?: Set<string>; report?: boolean } = {}) {
  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    for (const record of event.Records) {
      const pk = record.dynamodb?.Keys?.pk?.S as string;
      if (options.failAt?.has(pk)) {
        if (options.report)
          return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber as string }] };
        throw new Error(`cannot handle ${pk}`);
      }
      if (record.eventName === 'REMOVE') sink.delete(pk);
      else sink.set(pk, record.dynamodb?.NewImage);
    }
    return { batchItemFailures: [] };
  };
}

export async function putItems(tableName: string, pks: string[]): Promise<void> {
  for (const pk of pks)
    await dynamodb.send(
      new PutItemCommand({
        TableName: tableName,
        Item: { pk: { S: pk }, n: { N: '12345678901234567890123456789012345678' } },
      }),
    );
}

export async function tableState(tableName: string): Promise<StateSink> {
  const scan = await dynamodb.send(new ScanCommand({ TableName: tableName }));
  return new Map((scan.Items ?? []).map((item) => [item.pk?.S as string, item]));
}

/** Lambda's event source mapping over the table's stream, giving up on a failed batch at once. */
export async function runMapping(
  streamArn: string,
  handler: ReturnType<typeof sinkHandler>,
  onFailure: FailureDestination,
): Promise<void> {
  const emulator = new EventSourceMappingEmulator({
    batchSize: 100,
    maximumRetryAttempts: 1,
    reportBatchItemFailures: true,
    onFailure,
    handler,
  });
  const poller = new StreamPoller({ streams, streamArn, pollIntervalMs: 20 });
  await poller.runEmulator(emulator, { stopWhenCaughtUp: true, emptyPagesToStop: 10 });
}

/** Sends an on-failure record to every destination, as a mapping configured with one would to each in turn. */
export function fanOut(...destinations: FailureDestination[]): FailureDestination {
  return {
    async send(record, records) {
      for (const d of destinations) await d.send(record, records);
    },
  };
}

/**
 * A new table's stream records, in Lambda's shape, read with readStreamRange from the shard's
 * first record. Not from the shard's StartingSequenceNumber: DynamoDB Local numbers records
 * across all its tables, so when another table is written between this one's creation and its
 * first write (any concurrent test), that number is no record of this shard and reading at it
 * fails (TrimmedDataAccessException). The other table's write here makes that happen every time.
 */
export async function streamRecords(pks: string[]) {
  const table = await createTestTable(dynamodb);
  const other = await createTestTable(dynamodb);
  await putItems(other.tableName, ['between']);
  await putItems(table.tableName, pks);
  const shard = (await streams.send(new DescribeStreamCommand({ StreamArn: table.streamArn })))
    .StreamDescription?.Shards?.[0];
  const shardId = shard?.ShardId as string;
  const { ShardIterator } = await streams.send(
    new GetShardIteratorCommand({
      StreamArn: table.streamArn,
      ShardId: shardId,
      ShardIteratorType: 'TRIM_HORIZON',
    }),
  );
  const first = (await streams.send(new GetRecordsCommand({ ShardIterator }))).Records?.[0];
  const records = await readStreamRange(streams, {
    ...DOCUMENTED.DDBStreamBatchInfo,
    streamArn: table.streamArn,
    shardId,
    startSequenceNumber: first?.dynamodb?.SequenceNumber as string,
    endSequenceNumber: '9'.repeat(38),
  });
  return { table, records, shard };
}

/** A dead-letter entry for `record`, as the pipeline's dead-letter stage makes one. */
export function entryOf(record: LambdaStreamRecord, streamArn: string): DeadLetterEntry {
  return {
    reason: 'retries-exhausted',
    record,
    eventID: record.eventID,
    sequenceNumber: record.dynamodb.SequenceNumber,
    eventSourceARN: streamArn,
    error: { name: 'Error', message: 'index down' },
    attempts: 3,
    sinkName: 'index',
    at: new Date().toISOString(),
  };
}

export type LocalSqs = Awaited<ReturnType<typeof startLocalSqs>>;

/** A local SQS server for one test file: started before its tests, stopped after; read it inside a test. */
export function localSqsForFile(): () => LocalSqs {
  let local: LocalSqs | undefined;
  beforeAll(async () => {
    local = await startLocalSqs();
  });
  afterAll(async () => {
    await local?.stop();
  });
  return () => local as LocalSqs;
}
