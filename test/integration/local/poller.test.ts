import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DeleteItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  type DescribeStreamCommandOutput,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSourceMappingEmulator } from '../../../src/local/emulator.js';
import { type PollerEvent, StreamPoller, type StreamsApi } from '../../../src/local/poller.js';
import type { LambdaStreamRecord } from '../../../src/records/types.js';
import { createTestTable, localClients } from '../../support/aws.js';

const { dynamodb, streams } = localClients();
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidewater-poller-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function put(tableName: string, pk: string, extra: Record<string, { S: string }> = {}) {
  await dynamodb.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: pk }, ...extra } }));
}

function collector() {
  const seen: LambdaStreamRecord[] = [];
  const emulator = new EventSourceMappingEmulator({
    batchSize: 10,
    handler: async (event) => {
      seen.push(...event.Records);
    },
  });
  return { seen, emulator, keys: () => seen.map((r) => r.dynamodb.Keys.pk?.S) };
}

describe('StreamPoller against DynamoDB Local', () => {
  it('delivers INSERT / MODIFY / REMOVE in the Lambda shape and checkpoints the last one', async () => {
    const table = await createTestTable(dynamodb);
    await put(table.tableName, 'a', { v: { S: '1' } });
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: 'a' } },
        UpdateExpression: 'SET v = :v',
        ExpressionAttributeValues: { ':v': { S: '2' } },
      }),
    );
    await dynamodb.send(new DeleteItemCommand({ TableName: table.tableName, Key: { pk: { S: 'a' } } }));
    const { seen, emulator } = collector();
    const poller = new StreamPoller({ streams, streamArn: table.streamArn, pollIntervalMs: 50 });
    await poller.runEmulator(emulator, { stopWhenCaughtUp: true });
    expect(seen.map((r) => r.eventName)).toEqual(['INSERT', 'MODIFY', 'REMOVE']);
    const first = seen[0] as LambdaStreamRecord;
    expect(first.eventSourceARN).toBe(table.streamArn);
    expect(first.awsRegion).toBe('ddblocal');
    expect(typeof first.dynamodb.ApproximateCreationDateTime).toBe('number');
    expect(seen[1]?.dynamodb.OldImage?.v).toEqual({ S: '1' });
    const checkpoint = poller.checkpoint();
    const shard = Object.values(checkpoint?.shards ?? {})[0];
    expect(shard?.sequenceNumber).toBe(seen[2]?.dynamodb.SequenceNumber);
    await table.drop();
  });

  it('resumes from its checkpoint file after a restart', async () => {
    const table = await createTestTable(dynamodb);
    const file = join(dir, 'resume.json');
    for (const pk of ['a', 'b', 'c']) await put(table.tableName, pk);
    const first = collector();
    await new StreamPoller({ streams, streamArn: table.streamArn, checkpointFile: file }).runEmulator(
      first.emulator,
      {
        stopWhenCaughtUp: true,
      },
    );
    expect(first.keys()).toEqual(['a', 'b', 'c']);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.streamArn).toBe(table.streamArn);
    for (const pk of ['d', 'e']) await put(table.tableName, pk);
    const second = collector();
    await new StreamPoller({ streams, streamArn: table.streamArn, checkpointFile: file }).runEmulator(
      second.emulator,
      {
        stopWhenCaughtUp: true,
      },
    );
    expect(second.keys()).toEqual(['d', 'e']);
    await expect(
      new StreamPoller({ streams, streamArn: `${table.streamArn}x`, checkpointFile: file }).run(
        async () => undefined,
        {
          stopWhenCaughtUp: true,
        },
      ),
    ).rejects.toMatchObject({ name: 'CheckpointError' });
    await table.drop();
  });

  it('starts AT / AFTER a sequence number and at LATEST', async () => {
    const table = await createTestTable(dynamodb);
    for (const pk of ['a', 'b', 'c']) await put(table.tableName, pk);
    const all = collector();
    await new StreamPoller({ streams, streamArn: table.streamArn }).runEmulator(all.emulator, {
      stopWhenCaughtUp: true,
    });
    const second = all.seen[1]?.dynamodb.SequenceNumber as string;

    const at = collector();
    await new StreamPoller({
      streams,
      streamArn: table.streamArn,
      startingPosition: { atSequenceNumber: second },
    }).runEmulator(at.emulator, { stopWhenCaughtUp: true });
    expect(at.keys()).toEqual(['b', 'c']);

    const after = collector();
    await new StreamPoller({
      streams,
      streamArn: table.streamArn,
      startingPosition: { afterSequenceNumber: second },
    }).runEmulator(after.emulator, { stopWhenCaughtUp: true });
    expect(after.keys()).toEqual(['c']);

    const latest = collector();
    const controller = new AbortController();
    let firstPoll: () => void = () => undefined;
    const polled = new Promise<void>((resolve) => {
      firstPoll = resolve;
    });
    // Write only once LATEST has been read once, so the new item is after the iterator's position.
    const watching: StreamsApi = {
      send: (async (command: unknown) => {
        const out = await streams.send(command as never);
        if (command instanceof GetRecordsCommand) firstPoll();
        return out;
      }) as StreamsApi['send'],
    };
    const run = new StreamPoller({
      streams: watching,
      streamArn: table.streamArn,
      startingPosition: 'LATEST',
      pollIntervalMs: 50,
    }).runEmulator(
      new EventSourceMappingEmulator({
        handler: async (event) => {
          latest.seen.push(...event.Records);
          controller.abort();
        },
      }),
      { signal: controller.signal },
    );
    await polled;
    await put(table.tableName, 'd');
    await run;
    expect(latest.keys()).toEqual(['d']);
    await table.drop();
  });

  it('re-acquires an expired iterator AFTER the last record read, losing and repeating nothing', async () => {
    const table = await createTestTable(dynamodb);
    for (const pk of ['a', 'b', 'c', 'd', 'e']) await put(table.tableName, pk);
    let getRecords = 0;
    const expiring: StreamsApi = {
      send: ((command: { input: unknown }) => {
        if (command instanceof GetRecordsCommand && ++getRecords === 2) {
          return Promise.reject(
            Object.assign(new Error('Iterator expired'), { name: 'ExpiredIteratorException' }),
          );
        }
        return streams.send(command as never);
      }) as StreamsApi['send'],
    };
    const events: PollerEvent[] = [];
    const { keys, emulator } = collector();
    await new StreamPoller({
      streams: expiring,
      streamArn: table.streamArn,
      limit: 2,
      onEvent: (e) => events.push(e),
    }).runEmulator(emulator, { stopWhenCaughtUp: true });
    expect(keys()).toEqual(['a', 'b', 'c', 'd', 'e']);
    const expired = events.find((e) => e.type === 'iterator-expired');
    expect(expired).toMatchObject({ type: 'iterator-expired' });
    expect((expired as { resumeAfter?: string }).resumeAfter).toMatch(/^\d{21}$/);
    await table.drop();
  });

  it('follows a closed parent shard into its child only after the parent is read to its end', async () => {
    // Parent: a real shard closed by disabling the stream. Child: another table's real shard,
    // presented by a wrapper as the parent's child (DynamoDB Local never splits shards itself).
    const parentTable = await createTestTable(dynamodb);
    const childTable = await createTestTable(dynamodb);
    for (const pk of ['p1', 'p2', 'p3']) await put(parentTable.tableName, pk);
    for (const pk of ['c1', 'c2']) await put(childTable.tableName, pk);
    await dynamodb.send(
      new UpdateTableCommand({
        TableName: parentTable.tableName,
        StreamSpecification: { StreamEnabled: false },
      }),
    );
    const parentShards = (await streams.send(new DescribeStreamCommand({ StreamArn: parentTable.streamArn })))
      .StreamDescription?.Shards;
    const childShards = (await streams.send(new DescribeStreamCommand({ StreamArn: childTable.streamArn })))
      .StreamDescription?.Shards;
    const parent = parentShards?.[0];
    const child = childShards?.[0];
    expect(parent?.SequenceNumberRange?.EndingSequenceNumber).toBeDefined();
    const childId = 'shardId-00000000000000000002-child';
    // Listed child first and one shard per page, to exercise pagination and lineage ordering.
    const listed = [{ ...child, ShardId: childId, ParentShardId: parent?.ShardId }, parent];
    const lineage: StreamsApi = {
      send: ((command: { input: Record<string, unknown> }) => {
        if (command instanceof DescribeStreamCommand) {
          const start = command.input.ExclusiveStartShardId;
          const index = start ? listed.findIndex((s) => s?.ShardId === start) + 1 : 0;
          const out: Partial<DescribeStreamCommandOutput> = {
            StreamDescription: {
              StreamArn: parentTable.streamArn,
              Shards: [listed[index] as never],
              ...(index < listed.length - 1 ? { LastEvaluatedShardId: listed[index]?.ShardId } : {}),
            },
          };
          return Promise.resolve(out);
        }
        if (command instanceof GetShardIteratorCommand && command.input.ShardId === childId) {
          return streams.send(
            new GetShardIteratorCommand({
              ...command.input,
              StreamArn: childTable.streamArn,
              ShardId: child?.ShardId,
            } as never),
          );
        }
        return streams.send(command as never);
      }) as StreamsApi['send'],
    };
    const file = join(dir, 'lineage.json');
    const order: string[] = [];
    const events: PollerEvent[] = [];
    const poller = new StreamPoller({
      streams: lineage,
      streamArn: parentTable.streamArn,
      checkpointFile: file,
      onEvent: (e) => events.push(e),
    });
    await poller.runEmulator(
      new EventSourceMappingEmulator({
        handler: async (event) => {
          order.push(...event.Records.map((r) => r.dynamodb.Keys.pk?.S as string));
        },
      }),
      { stopWhenCaughtUp: true },
    );
    expect(order).toEqual(['p1', 'p2', 'p3', 'c1', 'c2']);
    const starts = events.filter((e) => e.type === 'shard-start').map((e) => e.shardId);
    expect(starts).toEqual([parent?.ShardId, childId]);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.shards[parent?.ShardId as string]).toMatchObject({
      finished: true,
      sequenceNumber: parent?.SequenceNumberRange?.EndingSequenceNumber,
    });
    expect(saved.shards[childId].finished).toBeUndefined();
    await Promise.all([parentTable.drop(), childTable.drop()]);
  });
});
