import { PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { FailureDestination } from '../../../src/local/emulator/destinations.js';
import { EventSourceMappingEmulator } from '../../../src/local/emulator/emulator.js';
import { StreamPoller } from '../../../src/local/emulator/poller.js';
import { localClients } from '../../support/aws.js';

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
