// Issue 23's promise, from the packed tarball: a table that already holds 10,000 items seeds a
// copy through `tidewater backfill` (killed half-way, then resumed from its checkpoint) while
// writes, updates and deletes go on; then the stream takes over from TRIM_HORIZON; the copy ends
// equal to the table, item by item. Then a batch fails past its retries to the on-failure
// destination, `redrive` runs it again, and the copy is exact again.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteItemCommand,
  type DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  EventSourceMappingEmulator,
  S3FailureDestination,
  type StreamHandler,
  StreamPoller,
} from 'tidewater/local';
import { useLocalAws } from 'tidewater/local/vitest';
import { handlerTarget, redrive } from 'tidewater/redrive';
import { beforeAll, expect, it } from 'vitest';
import { tidewaterCli } from './support/tidewater-cli.js';

const SOURCE = 'orders-seeded';
const COPY = 'orders-copy';
const VERSIONS = 'orders-copy-versions';
const ITEMS = 10_000;
const FAILURES = 'orders-copy-failures';
const local = useLocalAws({ buckets: [FAILURES] });
let streamArn: string;
let handler: StreamHandler;

type Item = Record<string, AttributeValue>;

/** What a lossy copy gets wrong: 38-digit numbers, binary, every kind of set, nesting. */
function item(pk: string, n: number): Item {
  const bytes = Uint8Array.from({ length: 6 + (n % 5) }, (_, i) => (n * 31 + i * 7) & 0xff);
  return {
    pk: { S: pk },
    big: { N: `${12345678901234567890123456789012345678n - BigInt(n)}` },
    small: { N: `0.${String(n).padStart(6, '0')}1` },
    payload: { B: bytes },
    tags: { SS: ['a', `t${n % 7}`] },
    scores: { NS: ['1', String(n + 2)] },
    blobs: { BS: [bytes.subarray(0, 3), bytes.subarray(3)] },
    nested: {
      M: { list: { L: [{ N: String(n) }, { M: { even: { BOOL: n % 2 === 0 } } }, { NULL: true }] } },
    },
  };
}

async function createTable(
  dynamodb: DynamoDBClient,
  name: string,
  stream: boolean,
): Promise<string | undefined> {
  const created = await dynamodb.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      ...(stream
        ? { StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } }
        : {}),
    }),
  );
  return created.TableDescription?.LatestStreamArn;
}

/** A table's items by key, sets in one order (DynamoDB promises none), binaries as base64. */
async function contents(dynamodb: DynamoDBClient, name: string): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  const canonical = (value: unknown): unknown => {
    if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
    if (Array.isArray(value)) return value.map(canonical);
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value).map(([k, v]) => [k, canonical(v)] as const);
    const set = entries.find(([k]) => k === 'SS' || k === 'NS' || k === 'BS');
    if (set) return { [set[0]]: [...(set[1] as string[])].sort() };
    return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : 1)));
  };
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({ TableName: name, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    for (const found of page.Items ?? []) out.set(found.pk!.S!, canonical(found));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return out;
}

/** Updates, deletes and new items, until `done()`: the application writing while the copy is seeded. */
async function writeMeanwhile(dynamodb: DynamoDBClient, done: () => boolean, from: number): Promise<number> {
  let n = from;
  // At least 40 and at most 1,500 writes: enough to race every phase, bounded on a slow machine.
  for (; (!done() || n < from + 40) && n < from + 1_500; n++) {
    const target = `order#${(n * 7919) % ITEMS}`;
    if (n % 4 === 0)
      await dynamodb.send(
        new UpdateItemCommand({
          TableName: SOURCE,
          Key: { pk: { S: target } },
          UpdateExpression: 'SET big = :b ADD tags :t',
          ExpressionAttributeValues: {
            ':b': { N: `-98765432109876543210987654321098765${n % 1000}` },
            ':t': { SS: [`u${n}`] },
          },
        }),
      );
    else if (n % 4 === 1)
      await dynamodb.send(new DeleteItemCommand({ TableName: SOURCE, Key: { pk: { S: target } } }));
    else if (n % 4 === 2)
      await dynamodb.send(new PutItemCommand({ TableName: SOURCE, Item: item(`order#new-${n}`, n) }));
    else await dynamodb.send(new PutItemCommand({ TableName: SOURCE, Item: item(target, n + 50_000) }));
  }
  return n;
}

/** `npx tidewater backfill` as a user runs it; `killWhen` ends it with SIGKILL. */
function backfill(checkpoint: string, killWhen?: () => boolean) {
  return tidewaterCli(
    [
      'backfill',
      '--scan',
      SOURCE,
      '--segments',
      '4',
      '--handler',
      'src/handlers/copy.ts#handler',
      '--checkpoint',
      checkpoint,
      '--batch-size',
      '50',
      '--no-progress',
    ],
    killWhen,
  );
}

beforeAll(async () => {
  const { dynamodb } = local.current;
  streamArn = (await createTable(dynamodb, SOURCE, true))!;
  await createTable(dynamodb, COPY, false);
  await createTable(dynamodb, VERSIONS, false);
  for (let i = 0; i < ITEMS; i += 25) {
    const puts = Array.from({ length: 25 }, (_, j) => ({
      PutRequest: { Item: item(`order#${i + j}`, i + j) },
    }));
    await dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [SOURCE]: puts } }));
  }
  Object.assign(process.env, {
    COPY_TABLE: COPY,
    COPY_VERSIONS_TABLE: VERSIONS,
    STREAM_TIME_RESOLUTION: '60',
  });
  ({ handler } = await import('../src/handlers/copy.js'));
}, 300_000);

it('seeds the copy by backfill (killed, resumed) while writes go on, hands off to the stream, and ends equal to the table', async () => {
  const { dynamodb, streams } = local.current;
  const checkpoint = path.join(mkdtempSync(path.join(tmpdir(), 'orders-backfill-')), 'checkpoint.json');
  const progressed = () => existsSync(checkpoint) && readFileSync(checkpoint, 'utf8').length > 0;

  let seeding = true;
  const writes = writeMeanwhile(dynamodb, () => !seeding, 0);
  const killed = await backfill(checkpoint, progressed);
  expect(killed.signal, killed.output).toBe('SIGKILL');
  const resumed = await backfill(checkpoint);
  seeding = false;
  const written = await writes;
  expect(resumed.code, resumed.output).toBe(0);
  expect(written).toBeGreaterThanOrEqual(40);

  // The stream consumer from TRIM_HORIZON: the stream still holds everything since the table
  // was created, the seeding writes included; the guard skips what the copy already has newer.
  const emulator = new EventSourceMappingEmulator({ batchSize: 500, handler });
  const positions = path.join(path.dirname(checkpoint), 'stream-checkpoint.json');
  const poller = new StreamPoller({ streams, streamArn, pollIntervalMs: 20, checkpointFile: positions });
  // An empty GetRecords page does not mean the shard's end: caught up after 10 in a row.
  await poller.runEmulator(emulator, { stopWhenCaughtUp: true, emptyPagesToStop: 10 });

  const [table, copy] = await Promise.all([contents(dynamodb, SOURCE), contents(dynamodb, COPY)]);
  expect(table.size).toBeGreaterThan(ITEMS / 2);
  expect(copy.size).toBe(table.size);
  for (const [key, expected] of table) expect(copy.get(key), key).toEqual(expected);

  // A deploy with a bug: a batch holding order#7 fails past its one retry, and Lambda's
  // on-failure destination (S3 here) gets the record of it; the copy misses those changes.
  const changed = ['order#7', 'order#new-2', 'order#15', 'order#7']; // order#7 twice: its order matters
  for (const [i, pk] of changed.entries())
    await dynamodb.send(new PutItemCommand({ TableName: SOURCE, Item: item(pk, 90_000 + i) }));
  const buggy: StreamHandler = async (event, context) => {
    if (event.Records.some((record) => record.dynamodb.Keys.pk?.S === 'order#7')) throw new Error('a bug');
    return handler(event, context);
  };
  const failing = new EventSourceMappingEmulator({
    batchSize: 500,
    maximumRetryAttempts: 1,
    onFailure: new S3FailureDestination(local.current.s3, FAILURES),
    handler: buggy,
  });
  const after = new StreamPoller({ streams, streamArn, pollIntervalMs: 20, checkpointFile: positions });
  await after.runEmulator(failing, { stopWhenCaughtUp: true, emptyPagesToStop: 10 });
  expect((await contents(dynamodb, COPY)).get('order#7')).not.toEqual(
    (await contents(dynamodb, SOURCE)).get('order#7'),
  );

  // The fix is deployed: redrive the failed batch through it.
  const report = await redrive({
    streamArn,
    bucket: FAILURES,
    target: handlerTarget(handler),
    streams,
    s3: local.current.s3,
  });
  expect(report).toMatchObject({
    messagesRead: 1,
    failed: 0,
    messagesRemoved: 1,
    recordsRedriven: changed.length,
  });
  const [tableNow, copyNow] = await Promise.all([contents(dynamodb, SOURCE), contents(dynamodb, COPY)]);
  expect(copyNow.size).toBe(tableNow.size);
  for (const [key, expected] of tableNow) expect(copyNow.get(key), key).toEqual(expected);
}, 600_000);
