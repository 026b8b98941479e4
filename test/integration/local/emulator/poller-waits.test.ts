import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetRecordsCommand } from '@aws-sdk/client-dynamodb-streams';
import { describe, expect, it } from 'vitest';
import { EventSourceMappingEmulator } from '../../../../src/local/emulator/emulator.js';
import type { StreamsApi } from '../../../../src/local/emulator/poller.js';
import { StreamPoller } from '../../../../src/local/emulator/poller.js';
import { EmulatorWaitTimeoutError } from '../../../../src/local/emulator/wait-bound.js';
import { createTestTable, localClients } from '../../../support/aws.js';

// A poller whose GetRecords stops answering (a stream endpoint that hangs after the first page)
// ends the run with a typed error naming the wait and the shard, not a run that never returns.

const TEST_BOUND_MS = 20_000;
const { dynamodb, streams } = localClients();

describe('a stream poller that finds nothing more because GetRecords never answers (DynamoDB Local)', () => {
  it('ends runEmulator with EmulatorWaitTimeoutError naming the next page, the shard and the checkpoint', async () => {
    const table = await createTestTable(dynamodb);
    await dynamodb.send(new PutItemCommand({ TableName: table.tableName, Item: { pk: { S: 'only' } } }));
    let getRecords = 0;
    const hanging: StreamsApi = {
      send: ((command: unknown) => {
        if (command instanceof GetRecordsCommand && ++getRecords > 1) return new Promise(() => undefined);
        return streams.send(command as never);
      }) as StreamsApi['send'],
    };
    const handled: string[] = [];
    const emulator = new EventSourceMappingEmulator({
      waitBoundMs: 500,
      handler: async (event) => {
        handled.push(...event.Records.map((r) => r.dynamodb.SequenceNumber));
      },
    });
    const poller = new StreamPoller({ streams: hanging, streamArn: table.streamArn, pollIntervalMs: 10 });
    let timer: NodeJS.Timeout | undefined;
    const error = await Promise.race([
      poller.runEmulator(emulator).then(
        () => new Error('the poller returned'),
        (e: unknown) => e,
      ),
      new Promise<Error>((resolve) => {
        timer = setTimeout(
          () => resolve(new Error(`still waiting after ${TEST_BOUND_MS} ms`)),
          TEST_BOUND_MS,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    expect(error).toBeInstanceOf(EmulatorWaitTimeoutError);
    const waited = error as EmulatorWaitTimeoutError;
    expect(waited.waitedFor).toBe('next page of records');
    expect(waited.shardId).toMatch(/^shardId-/);
    expect(handled).toHaveLength(1);
    expect(waited.checkpoint).toBe(handled[0]);
    expect(poller.checkpoint()?.shards[waited.shardId]?.sequenceNumber).toBe(handled[0]);
    await table.drop();
  });
});
