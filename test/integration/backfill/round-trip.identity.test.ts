// Issue 36's round trip, as a user runs it: a table whose number sort key is written in several
// spellings, an export in the middle, backfill through a version guard, the stream from
// TRIM_HORIZON through the same guard with a sink that fails some records once (dead-lettered to
// SQS), then redrive from that queue. The copy must end equal to the table by value, with one
// version row per item.
import {
  type AttributeValue,
  DeleteItemCommand,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runBackfill } from '../../../src/backfill/index.js';
import { EventSourceMappingEmulator } from '../../../src/local/emulator/emulator.js';
import { StreamPoller } from '../../../src/local/emulator/poller.js';
import { writeLocalExport } from '../../../src/local/export/index.js';
import type { OrderingConfig } from '../../../src/pipeline/config.js';
import { route } from '../../../src/pipeline/config.js';
import { createStreamHandler } from '../../../src/pipeline/middleware.js';
import { toJsonAttributeMap } from '../../../src/records/convert.js';
import { keyIdentity } from '../../../src/records/key-identity.js';
import { canonicalNumberText } from '../../../src/records/number-canonical.js';
import type { AttributeMap, ClassifiedRecord } from '../../../src/records/types.js';
import { handlerTarget, redrive } from '../../../src/redrive/index.js';
import { DynamoDbVersionStore } from '../../../src/sinks/dynamodb-version-store.js';
import { SqsDeadLetterSink } from '../../../src/sinks/sqs-dead-letter-sink.js';
import type { Sink, SinkResult } from '../../../src/sinks/types.js';
import { versionGuard } from '../../../src/sinks/version-guard.js';
import {
  createTestBucket,
  createTestTable,
  localClients,
  NUMBER_SORT_KEY,
  readStreamUntil,
  type TestTableOptions,
} from '../../support/aws.js';
import { quietLogger } from '../../support/backfill-table.js';
import { ItemStateSink } from '../../support/item-state-sink.js';
import { localSqsForFile } from '../redrive/support.js';

const { dynamodb, streams, s3 } = localClients();
const sqs = localSqsForFile();

const BIG = '12345678901234567890123456789012345678';
const BIG_OTHER = '1.2345678901234567890123456789012345678E37';

/** Fails each record whose sequence number is in `failOnce` the first time it is written, as an index that was down. */
class FailOnceSink implements Sink {
  readonly name = 'index';
  readonly failOnce = new Set<string>();
  constructor(readonly inner: ItemStateSink) {}
  write(records: readonly ClassifiedRecord[]): SinkResult | Promise<SinkResult> {
    const failed: { sequenceNumber: string; error: unknown }[] = [];
    const pass: ClassifiedRecord[] = [];
    for (const r of records) {
      if (this.failOnce.delete(r.sequenceNumber))
        failed.push({ sequenceNumber: r.sequenceNumber, error: new Error('index down') });
      else pass.push(r);
    }
    this.inner.write(pass);
    return failed.length === 0 ? {} : { failed };
  }
}

/** An image with every number (key or not) as its canonical text: what "equal by value" compares. */
function byValue(image: AttributeMap): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(image)) {
    const v = value as { N?: string };
    out[name] = v.N !== undefined ? { N: canonicalNumberText(v.N) } : value;
  }
  return out;
}

async function scanAll(table: string): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}

/** How a round trip's table is keyed: its options and the key a write names (`spelling` as written). */
interface Keying {
  table: TestTableOptions;
  key(spelling: string): Record<string, AttributeValue>;
}

const NUMBER_KEYED: Keying = {
  table: NUMBER_SORT_KEY,
  key: (sk) => ({ pk: { S: 'order' }, sk: { N: sk } }),
};

/** A binary partition key: `hex` is the bytes the key holds. */
const BINARY_KEYED: Keying = {
  table: {
    attributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'B' }],
    keySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
  },
  key: (hex) => ({ pk: { B: Buffer.from(hex, 'hex') } }),
};

/**
 * A table keyed as `keying` says, its version table, a bucket, a dead-letter queue, writes keyed by
 * any spelling, and the pipeline (in `ordering`) that copies the table through a version guard.
 */
async function setUp(keying: Keying, ordering: OrderingConfig = 'ordered') {
  const table = await createTestTable(dynamodb, keying.table);
  const versions = await createTestTable(dynamodb);
  const bucket = await createTestBucket(s3);
  const { QueueUrl } = await sqs().sqs.send(new CreateQueueCommand({ QueueName: `dl-${table.tableName}` }));
  const queueUrl = QueueUrl as string;
  const { key } = keying;
  const write = {
    put: (sk: string, rev: number) =>
      dynamodb.send(
        new PutItemCommand({ TableName: table.tableName, Item: { ...key(sk), rev: { N: String(rev) } } }),
      ),
    update: (sk: string, rev: string) =>
      dynamodb.send(
        new UpdateItemCommand({
          TableName: table.tableName,
          Key: key(sk),
          UpdateExpression: 'SET rev = :r',
          ExpressionAttributeValues: { ':r': { N: rev } },
        }),
      ),
    remove: (sk: string) =>
      dynamodb.send(new DeleteItemCommand({ TableName: table.tableName, Key: key(sk) })),
  };
  const copy = new ItemStateSink();
  const index = new FailOnceSink(copy);
  const guarded = versionGuard(index, {
    store: new DynamoDbVersionStore({ tableName: versions.tableName, client: dynamodb }),
    creationTimeResolution: 60,
  });
  const config = {
    routes: [route({ when: () => true, to: guarded })],
    deadLetter: new SqsDeadLetterSink({ queueUrl, client: sqs().sqs }),
    metrics: false as const,
    logger: quietLogger,
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
    ordering,
  };
  return {
    keying,
    table,
    versions,
    bucket,
    queueUrl,
    write,
    copy,
    index,
    config,
    async drop() {
      await table.drop();
      await versions.drop();
    },
  };
}

type RoundTrip = Awaited<ReturnType<typeof setUp>>;

/** Before any export: one item (1.5) in three spellings, the 38-digit one in two, two more. */
async function writesBefore({ write }: RoundTrip): Promise<void> {
  await write.put('1.5', 1);
  await write.update('1.50', '2');
  await write.update('15E-1', '3');
  await write.put(BIG, 1);
  await write.update(BIG_OTHER, '2.0');
  await write.put('2.25', 1);
  await write.put('7', 1);
}

/** After the first export: other spellings again, a delete, and a deleted item put back. */
async function writesAfter({ write }: RoundTrip): Promise<void> {
  await write.update('0.15e1', '4');
  await write.update(BIG_OTHER.replace('E37', 'e+37'), '3');
  await write.remove('225E-2');
  await write.remove('7.000');
  await write.put('0.7E1', 2);
  await write.update('1.50', '5.00');
}

/** Records written by writesBefore and writesAfter. */
const WRITES = 13;

/** A full export of the table now: its prefix. */
async function fullExport(rt: RoundTrip, files = 1): Promise<string> {
  const exported = await writeLocalExport({
    dynamodb,
    s3,
    bucket: rt.bucket,
    table: rt.table.tableName,
    type: 'full',
    files,
  });
  return exported.prefix;
}

async function backfill(rt: RoundTrip, prefix: string): Promise<void> {
  const report = await runBackfill(rt.config, {
    source: { export: { bucket: rt.bucket, prefix } },
    s3,
    dynamodb,
  });
  expect(report).toMatchObject({ complete: true, failed: 0, deadLettered: 0 });
}

/** The stream from TRIM_HORIZON through the guard, as Lambda's mapping reads it. */
async function stream(rt: RoundTrip): Promise<void> {
  const emulator = new EventSourceMappingEmulator({ batchSize: 4, handler: createStreamHandler(rt.config) });
  const poller = new StreamPoller({ streams, streamArn: rt.table.streamArn, pollIntervalMs: 20 });
  await poller.runEmulator(emulator, { stopWhenCaughtUp: true, emptyPagesToStop: 5 });
}

/**
 * The copy equals the table by value (items compared as a stream carries them, binary as base64),
 * and the version table holds one row per item ever written.
 */
async function expectCopyEqualsTable(rt: RoundTrip, items: number, itemsEver: number): Promise<void> {
  const source = (await scanAll(rt.table.tableName)).map((item) => toJsonAttributeMap(item));
  expect(source).toHaveLength(items);
  const keyNames = (rt.keying.table.keySchema ?? []).map((k) => k.AttributeName as string);
  const want = new Map(
    source.map((item) => [keyIdentity(Object.fromEntries(keyNames.map((n) => [n, item[n]]))), byValue(item)]),
  );
  const got = new Map([...rt.copy.items].map(([id, image]) => [id, byValue(image)]));
  expect(got).toEqual(want);
  expect(await scanAll(rt.versions.tableName)).toHaveLength(itemsEver);
}

/** Redrives the dead-letter queue through the same pipeline: every message succeeds and is removed. */
async function redriveQueue(rt: RoundTrip, messages: number): Promise<void> {
  const queued = await sqs().sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: rt.queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  expect(Number(queued.Attributes?.ApproximateNumberOfMessages)).toBe(messages);
  const redriven = await redrive({
    queueUrl: rt.queueUrl,
    streamArn: rt.table.streamArn,
    sqs: sqs().sqs,
    streams,
    waitTimeSeconds: 0,
    target: handlerTarget(createStreamHandler(rt.config)),
  });
  expect(redriven).toMatchObject({ messagesRead: messages, succeeded: messages, messagesRemoved: messages });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('backfill → stream → redrive, number keys spelled several ways', () => {
  for (const ordering of ['ordered', { mode: 'per-key', concurrency: 4 }] as const) {
    it(`a full export in the middle; the stream (${typeof ordering === 'string' ? ordering : ordering.mode}) fails some records once, dead-lettered to SQS and redriven: the copy ends equal to the table by value, one version row per item`, async () => {
      const rt = await setUp(NUMBER_KEYED, ordering);
      await writesBefore(rt);
      const exported = await fullExport(rt, 2);
      await writesAfter(rt);

      const records = await readStreamUntil(streams, rt.table.streamArn, (r) => r.length >= WRITES);
      expect(records).toHaveLength(WRITES);
      // The last write to 1.5 (a MODIFY keyed 1.50), the 38-digit item's last write (keyed e+37),
      // the delete of 2.25 and a write the stream then outdates (0.15e1's): each fails once.
      for (const i of [12, 8, 9, 7]) rt.index.failOnce.add(records[i]?.dynamodb?.SequenceNumber as string);

      await backfill(rt, exported);
      await stream(rt);
      expect(rt.index.failOnce.size).toBe(0);
      await redriveQueue(rt, 4);
      // 2.25's row is its tombstone.
      await expectCopyEqualsTable(rt, 3, 4);
      await rt.drop();
    }, 120_000);
  }

  it('a full export, then an incremental one taken a minute on: one line per item whatever its writes were keyed by, and the copy ends equal to the table', async () => {
    const rt = await setUp(NUMBER_KEYED);
    await writesBefore(rt);
    await backfill(rt, await fullExport(rt));
    await writesAfter(rt);

    // Taken in the minute after the writes (DynamoDB Local stamps the stream to the minute): its
    // copy outranks every stream record, so the stream changes nothing and the export alone must
    // be right. Only Date moves.
    const writesMinute = Math.floor(Date.now() / 60_000) * 60_000;
    vi.useFakeTimers({ toFake: ['Date'], now: writesMinute + 61_000 });
    const incremental = await writeLocalExport({
      dynamodb,
      streams,
      s3,
      bucket: rt.bucket,
      table: rt.table.tableName,
      type: 'incremental',
      from: 0,
    });
    vi.useRealTimers();
    // 1.5, the 38-digit item, 2.25 and 7: one line each.
    expect(incremental.itemCount).toBe(4);
    await backfill(rt, incremental.prefix);
    await stream(rt);
    await expectCopyEqualsTable(rt, 3, 4);
    await rt.drop();
  }, 120_000);

  it('a binary key (bytes 00 and ff included) takes the same trip: export, backfill, stream with failures, redrive', async () => {
    const rt = await setUp(BINARY_KEYED, { mode: 'per-key', concurrency: 4 });
    await rt.write.put('00ff', 1);
    await rt.write.update('00ff', '2');
    await rt.write.put('ff00ff', 1);
    await rt.write.put('2b2f3d', 1);
    const exported = await fullExport(rt);
    await rt.write.update('ff00ff', '2');
    await rt.write.remove('00ff');
    await rt.write.update('2b2f3d', '2');
    const records = await readStreamUntil(streams, rt.table.streamArn, (r) => r.length >= 7);
    expect(records).toHaveLength(7);
    for (const i of [4, 5]) rt.index.failOnce.add(records[i]?.dynamodb?.SequenceNumber as string);

    await backfill(rt, exported);
    await stream(rt);
    await redriveQueue(rt, 2);
    await expectCopyEqualsTable(rt, 2, 3);
    await rt.drop();
  }, 120_000);
});
