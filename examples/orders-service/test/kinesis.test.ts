// The same service fed through Kinesis Data Streams for DynamoDB, end to end on the local servers:
// DynamoDB Local's stream forwarded into a Kinesis stream (kinesalite) the way a table's streaming
// destination writes it — with duplicates and reordering injected, as Kinesis may deliver them —
// read by Lambda's Kinesis event source mapping into a createStreamHandler function whose routes
// reach the S3 archive and a custom sink. Each change lands once, in per-item order.
import { readFileSync } from 'node:fs';
import { CreateTableCommand, DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import {
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  type KinesisClient,
} from '@aws-sdk/client-kinesis';
import {
  type ClassifiedRecord,
  createStreamHandler,
  kinesisSource,
  parseStreamEvent,
  type Sink,
} from 'tidewater';
import { readArchive } from 'tidewater/archive';
import {
  KinesisBridge,
  KinesisMappingEmulator,
  type KinesisServer,
  KinesisShardReader,
  localKinesisClient,
  startKinesisServer,
} from 'tidewater/local';
import { useLocalAws } from 'tidewater/local/vitest';
import { S3ArchiveSink } from 'tidewater/s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BUCKET = 'orders-kinesis-archive';
const TABLE = 'orders-kinesis';
const ORDERS = ['order-1', 'order-2', 'order-3', 'order-4'];
const STATUSES = ['placed', 'paid', 'packed', 'shipped'];

const local = useLocalAws({ buckets: [BUCKET] });
let server: KinesisServer;
let kinesis: KinesisClient;

beforeAll(async () => {
  server = await startKinesisServer();
  kinesis = localKinesisClient(server.endpoint);
});
afterAll(async () => {
  kinesis?.destroy();
  await server?.stop();
});

/** A custom sink: the order of what it is handed is what it keeps. */
function statusLog(): Sink & { readonly changes: Map<string, string[]>; readonly eventIds: string[] } {
  const changes = new Map<string, string[]>();
  const eventIds: string[] = [];
  return {
    name: 'status-log',
    changes,
    eventIds,
    write(records: readonly ClassifiedRecord[]) {
      for (const record of records) {
        eventIds.push(record.eventID);
        const list = changes.get(String(record.keys.pk)) ?? [];
        list.push(record.kind === 'user-delete' ? 'deleted' : String(record.newImage?.status));
        changes.set(String(record.keys.pk), list);
      }
      return undefined;
    },
  };
}

describe('a Kinesis-fed handler on the local servers', () => {
  it('hands its sinks each change exactly once, in per-item order, despite injected duplicates and reordering', async () => {
    const { dynamodb, streams, s3 } = local.current;
    const table = await dynamodb.send(
      new CreateTableCommand({
        TableName: TABLE,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      }),
    );
    await kinesis.send(new CreateStreamCommand({ StreamName: 'orders-changes', ShardCount: 2 }));
    const summary = await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: 'orders-changes' }));
    const kinesisStreamArn = summary.StreamDescriptionSummary!.StreamARN!;

    // Every order moves through each status, the orders interleaved; the last one is then deleted.
    for (const status of STATUSES) {
      for (const pk of ORDERS) {
        await dynamodb.send(
          new PutItemCommand({ TableName: TABLE, Item: { pk: { S: pk }, status: { S: status } } }),
        );
      }
    }
    await dynamodb.send(new DeleteItemCommand({ TableName: TABLE, Key: { pk: { S: 'order-4' } } }));
    const changes = ORDERS.length * STATUSES.length + 1;

    const forwarded = await new KinesisBridge({
      streams,
      tableStreamArn: table.TableDescription!.LatestStreamArn!,
      tableName: TABLE,
      kinesis,
      kinesisStreamArn,
      pollIntervalMs: 20,
      faults: { seed: 26, duplicateRate: 0.5, reorderWindow: 8 },
    }).run({ stopWhenCaughtUp: true });
    expect(forwarded.changes).toBe(changes);
    expect(forwarded.duplicates).toBeGreaterThan(0);

    const log = statusLog();
    const handler = createStreamHandler({
      source: kinesisSource(),
      routes: [
        {
          when: ['insert', 'modify', 'user-delete'],
          to: [new S3ArchiveSink({ bucket: BUCKET, prefix: 'archive/', client: s3 }), log],
        },
      ],
    });
    const emulator = new KinesisMappingEmulator({
      handler,
      batchSize: 100,
      functionResponseTypes: ['ReportBatchItemFailures'],
      bisectBatchOnFunctionError: true,
      maximumRetryAttempts: 2,
    });
    const shards = await new KinesisShardReader({
      kinesis,
      streamArn: kinesisStreamArn,
      pollIntervalMs: 20,
    }).runEmulator(emulator, { stopWhenCaughtUp: true });
    expect(shards.reduce((n, shard) => n + shard.records, 0)).toBe(forwarded.put);
    expect(shards.every((shard) => shard.discarded === 0)).toBe(true);

    // The custom sink: each change once, each order's changes in the order they were made.
    expect(log.eventIds).toHaveLength(changes);
    expect(new Set(log.eventIds).size).toBe(changes);
    expect(Object.fromEntries(log.changes)).toEqual({
      'order-1': STATUSES,
      'order-2': STATUSES,
      'order-3': STATUSES,
      'order-4': [...STATUSES, 'deleted'],
    });

    // The archive, read back with tidewater's reader: every change once.
    const archived: ClassifiedRecord[] = [];
    for await (const record of readArchive({
      bucket: BUCKET,
      table: TABLE,
      prefix: 'archive/',
      from: new Date(Date.now() - 3_600_000),
      to: new Date(Date.now() + 3_600_000),
      client: s3,
    }))
      archived.push(record);
    expect(archived.map((r) => r.eventID).sort()).toEqual([...log.eventIds].sort());
  });

  it("parses Powertools' Kinesis-DynamoDB test event", () => {
    const event = JSON.parse(
      readFileSync(new URL('./events/powertools-kinesis-dynamodb-stream.json', import.meta.url), 'utf8'),
    );
    const records = parseStreamEvent(event, { source: 'kinesis' });
    expect(records.map((r) => [r.kind, r.keys.id, r.newImage?.data])).toEqual([
      ['insert', 'record-1qit2y819gi', 'data-x6aq7ckdpgk'],
      ['insert', 'record-fvxn3q4q5jw', 'data-4eompjs89n5'],
    ]);
    expect(
      records.every((r) => r.tableName === 'PowertoolsEventsStack-DynamoDBTable59784FC0-8NKAMTERTAXY'),
    ).toBe(true);
    expect(records[0]?.origin).toMatchObject({
      source: 'kinesis',
      precision: 'MILLISECOND',
      creationTime: 1731924555370,
    });
  });
});
