import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/local/emulator/clock.js';
import { EventSourceMappingEmulator } from '../../../src/local/emulator/emulator.js';
import { StreamPoller } from '../../../src/local/emulator/poller.js';
import { createWindowHandler } from '../../../src/pipeline/index.js';
import { toLambdaRecord } from '../../../src/records/index.js';
import { createTestTable, enableTtl, localClients, readStreamUntil } from '../../support/aws.js';

// The worked example of docs/pipeline.md ("Windowed handlers"), on DynamoDB Local's real stream
// and its own TTL sweep: per 5-minute window, the TTL deletes of each table, written to a metrics
// item. The tumbling-window rules are the Lambda developer guide's ("Using tumbling windows with
// DynamoDB", services-ddb-windows), applied by the event source mapping emulator.

const { dynamodb, streams } = localClients();
const WINDOW_SECONDS = 300;

/** The docs' handler, with its client and table given instead of read from the environment. */
function ttlDeletesPerWindow(client: DynamoDBClient, metricsTable: string) {
  return createWindowHandler<Record<string, number>>({
    initial: () => ({}),
    when: 'ttl-delete',
    reduce: (counts, records) => {
      for (const record of records) {
        const table = record.tableName ?? 'unknown';
        counts[table] = (counts[table] ?? 0) + 1;
      }
      return counts;
    },
    onWindowEnd: async (counts, window) => {
      // This segment of this shard's window, so a retried final invocation adds nothing twice.
      const segment = `${window.shardId}/${window.firstSequenceNumber}`;
      for (const [table, deletes] of Object.entries(counts)) {
        try {
          await client.send(
            new UpdateItemCommand({
              TableName: metricsTable,
              Key: { pk: { S: `ttl-deletes#${table}` }, sk: { S: window.start } },
              UpdateExpression: 'ADD deletes :n, #segments :segment SET windowEnd = :end',
              ConditionExpression: 'NOT contains(#segments, :id)',
              ExpressionAttributeNames: { '#segments': 'segments' }, // a reserved word
              ExpressionAttributeValues: {
                ':n': { N: String(deletes) },
                ':segment': { SS: [segment] },
                ':id': { S: segment },
                ':end': { S: window.end },
              },
            }),
          );
        } catch (error) {
          if (!(error instanceof ConditionalCheckFailedException)) throw error;
        }
      }
    },
  });
}

let metricsTable: string;
const sources: { tableName: string; streamArn: string; expired: number; drop: () => Promise<void> }[] = [];

beforeAll(async () => {
  const metrics = await createTestTable(dynamodb, {
    attributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
    ],
    keySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
  });
  metricsTable = metrics.tableName;
  const past = Math.floor(Date.now() / 1000) - 3600;
  for (const expired of [3, 2]) {
    const table = await createTestTable(dynamodb);
    for (let i = 0; i < expired; i++) {
      await dynamodb.send(
        new PutItemCommand({
          TableName: table.tableName,
          Item: { pk: { S: `expired-${i}` }, expiresAt: { N: String(past) } },
        }),
      );
    }
    // Not counted: an item that stays, and one a caller deletes.
    await dynamodb.send(new PutItemCommand({ TableName: table.tableName, Item: { pk: { S: 'live' } } }));
    await dynamodb.send(new PutItemCommand({ TableName: table.tableName, Item: { pk: { S: 'gone' } } }));
    await dynamodb.send(new DeleteItemCommand({ TableName: table.tableName, Key: { pk: { S: 'gone' } } }));
    await enableTtl(dynamodb, table.tableName, 'expiresAt');
    sources.push({ ...table, expired });
  }
});

afterAll(async () => {
  for (const table of sources) await table.drop();
});

/** The TTL deletes of a source's stream per window start, read straight from the stream. */
async function expectedPerWindow(source: (typeof sources)[number]): Promise<Map<string, number>> {
  const records = await readStreamUntil(
    streams,
    source.streamArn,
    (read) =>
      read.filter((r) => r.userIdentity?.PrincipalId === 'dynamodb.amazonaws.com').length >= source.expired,
  );
  const perWindow = new Map<string, number>();
  for (const raw of records) {
    const record = toLambdaRecord(raw, { streamArn: source.streamArn });
    if (record.userIdentity?.principalId !== 'dynamodb.amazonaws.com') continue;
    const start =
      Math.floor((record.dynamodb.ApproximateCreationDateTime as number) / WINDOW_SECONDS) * WINDOW_SECONDS;
    const key = new Date(start * 1000).toISOString().replace('.000', '');
    perWindow.set(key, (perWindow.get(key) ?? 0) + 1);
  }
  return perWindow;
}

/** One run of the mapping over a source's stream, from its start, until it is caught up. */
async function runMapping(source: (typeof sources)[number]) {
  // The emulator's clock stands past every window, so the first empty page closes them: a live
  // run reaches the same point when the windows' end passes.
  const mapping = new EventSourceMappingEmulator({
    functionName: 'ttl-deletes-per-window',
    tumblingWindowInSeconds: WINDOW_SECONDS,
    clock: new ManualClock(Date.now() + 2 * WINDOW_SECONDS * 1000),
    handler: ttlDeletesPerWindow(dynamodb, metricsTable),
  });
  const poller = new StreamPoller({ streams, streamArn: source.streamArn, pollIntervalMs: 10 });
  await poller.runEmulator(mapping, { stopWhenCaughtUp: true });
  return mapping;
}

async function metrics(): Promise<Map<string, number>> {
  const scan = await dynamodb.send(new ScanCommand({ TableName: metricsTable, ConsistentRead: true }));
  return new Map((scan.Items ?? []).map((item) => [`${item.pk?.S} ${item.sk?.S}`, Number(item.deletes?.N)]));
}

describe('createWindowHandler on a DynamoDB Local stream with a tumbling window (services-ddb-windows)', () => {
  it("writes each table's TTL deletes per window to a metrics item, once, however often the stream is replayed", async () => {
    const expected = new Map<string, number>();
    for (const source of sources) {
      for (const [start, count] of await expectedPerWindow(source))
        expected.set(`ttl-deletes#${source.tableName} ${start}`, count);
    }
    expect([...expected.values()].reduce((a, b) => a + b, 0)).toBe(5);

    for (const source of sources) {
      const mapping = await runMapping(source);
      const invokes = mapping.log.filter((e) => e.type === 'invoke');
      // Every window ended with its final invocation; user deletes and inserts reached no state.
      expect(invokes.some((e) => e.type === 'invoke' && e.window?.final)).toBe(true);
    }
    expect(await metrics()).toEqual(expected);

    // At least once: a mapping re-reading the stream (a restart without its checkpoint) makes the
    // same segments, whose final writes the condition turns away.
    for (const source of sources) await runMapping(source);
    expect(await metrics()).toEqual(expected);
  });
});
