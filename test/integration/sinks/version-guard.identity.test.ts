import { PutItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runBackfill } from '../../../src/backfill/index.js';
import { EventSourceMappingEmulator } from '../../../src/local/emulator/emulator.js';
import { StreamPoller } from '../../../src/local/emulator/poller.js';
import { writeLocalExport } from '../../../src/local/export/index.js';
import { route } from '../../../src/pipeline/config.js';
import { createStreamHandler } from '../../../src/pipeline/middleware.js';
import { DynamoDbVersionStore } from '../../../src/sinks/dynamodb-version-store.js';
import { MemoryDeadLetterSink } from '../../../src/sinks/memory-dead-letter-sink.js';
import { versionGuard } from '../../../src/sinks/version-guard.js';
import {
  createTestBucket,
  createTestTable,
  localClients,
  NUMBER_SORT_KEY,
  readStreamUntil,
} from '../../support/aws.js';
import { ItemStateSink } from '../../support/item-state-sink.js';

const { dynamodb, streams, s3 } = localClients();

afterEach(() => {
  vi.useRealTimers();
});

describe('version guard: one item, whatever spelling its number key arrives in', () => {
  it("issue 36's repro: put 1.5 rev 1, update by key 1.50 to rev 2, put rev 3, export a minute on, backfill, stream from TRIM_HORIZON: the copy ends at rev 3", async () => {
    const table = await createTestTable(dynamodb, NUMBER_SORT_KEY);
    const versions = await createTestTable(dynamodb);
    const bucket = await createTestBucket(s3);
    const put = (rev: number) =>
      dynamodb.send(
        new PutItemCommand({
          TableName: table.tableName,
          Item: { pk: { S: 'order' }, sk: { N: '1.5' }, rev: { N: String(rev) } },
        }),
      );
    await put(1);
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: 'order' }, sk: { N: '1.50' } },
        UpdateExpression: 'SET rev = :r',
        ExpressionAttributeValues: { ':r': { N: '2' } },
      }),
    );
    await put(3);

    // The export is taken in the minute after the writes (DynamoDB Local stamps the stream to the
    // minute): its copy then outranks every stream record, as an export taken later would. Only
    // Date moves; the servers and timers run as they are.
    const writesMinute = Math.floor(Date.now() / 60_000) * 60_000;
    vi.useFakeTimers({ toFake: ['Date'], now: writesMinute + 61_000 });
    const exported = await writeLocalExport({
      dynamodb,
      s3,
      bucket,
      table: table.tableName,
      type: 'full',
      files: 1,
    });
    vi.useRealTimers();

    const sink = new ItemStateSink();
    const deadLetter = new MemoryDeadLetterSink();
    const guarded = versionGuard(sink, {
      store: new DynamoDbVersionStore({ tableName: versions.tableName, client: dynamodb }),
      creationTimeResolution: 60,
    });
    const config = {
      routes: [route({ when: () => true, to: guarded })],
      deadLetter,
      metrics: false as const,
    };
    const report = await runBackfill(config, {
      source: { export: { bucket, prefix: exported.prefix } },
      s3,
      dynamodb,
    });
    expect(report.complete).toBe(true);

    const emulator = new EventSourceMappingEmulator({ batchSize: 10, handler: createStreamHandler(config) });
    const poller = new StreamPoller({ streams, streamArn: table.streamArn, pollIntervalMs: 20 });
    await poller.runEmulator(emulator, { stopWhenCaughtUp: true, emptyPagesToStop: 5 });

    expect(deadLetter.entries).toEqual([]);
    const read = await dynamodb.send(
      new ScanCommand({ TableName: versions.tableName, ConsistentRead: true }),
    );
    expect([...sink.items.values()]).toEqual([{ pk: { S: 'order' }, sk: { N: '1.5' }, rev: { N: '3' } }]);
    expect(read.Items).toHaveLength(1);
    // The repro holds while DynamoDB Local's MODIFY carries the key as the request spelt it.
    const records = await readStreamUntil(streams, table.streamArn, (r) => r.length >= 3);
    expect(records.map((r) => `${r.eventName} ${r.dynamodb?.Keys?.sk?.N}`)).toEqual([
      'INSERT 1.5',
      'MODIFY 1.50',
      'MODIFY 1.5',
    ]);
    await table.drop();
    await versions.drop();
  }, 120_000);
});
