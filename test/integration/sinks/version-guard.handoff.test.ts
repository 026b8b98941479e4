import {
  BatchWriteItemCommand,
  DeleteItemCommand,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { runBackfill } from '../../../src/backfill/index.js';
import { EventSourceMappingEmulator } from '../../../src/local/emulator/emulator.js';
import { StreamPoller } from '../../../src/local/emulator/poller.js';
import { route } from '../../../src/pipeline/config.js';
import { createStreamHandler } from '../../../src/pipeline/middleware.js';
import { toJsonAttributeMap } from '../../../src/records/convert.js';
import type { AttributeMap, ClassifiedRecord } from '../../../src/records/types.js';
import { DynamoDbVersionStore } from '../../../src/sinks/dynamodb-version-store.js';
import { MemoryDeadLetterSink } from '../../../src/sinks/memory-dead-letter-sink.js';
import { itemKeyOf, recordVersion } from '../../../src/sinks/record-version.js';
import { versionGuard } from '../../../src/sinks/version-guard.js';
import { createTestTable, localClients } from '../../support/aws.js';
import { ItemStateSink } from '../../support/item-state-sink.js';

const { dynamodb, streams } = localClients();

/** An item with what a lossy copy gets wrong: 38-digit numbers, binary, sets, nesting. */
function item(pk: string, n: number): AttributeMap {
  const bytes = Buffer.from(Array.from({ length: 8 + (n % 9) }, (_, i) => (n * 37 + i * 11) & 0xff));
  return {
    pk: { S: pk },
    big: { N: `${12345678901234567890123456789012345678n - BigInt(n)}` },
    tiny: { N: `0.${String(n).padStart(6, '0')}1` },
    payload: { B: bytes.toString('base64') },
    tags: { SS: ['a', `t${n % 7}`] },
    scores: { NS: ['1', String(n + 2)] },
    blobs: { BS: [bytes.subarray(0, 3).toString('base64'), bytes.subarray(3).toString('base64')] },
    nested: {
      M: { list: { L: [{ N: String(n) }, { M: { deep: { BOOL: n % 2 === 0 } } }, { NULL: true }] } },
    },
  };
}

function sdk(map: AttributeMap): never {
  const convert = (v: unknown): unknown => {
    const value = v as Record<string, unknown>;
    if (typeof value.B === 'string') return { B: Buffer.from(value.B, 'base64') };
    if (Array.isArray(value.BS)) return { BS: (value.BS as string[]).map((b) => Buffer.from(b, 'base64')) };
    if (value.M !== undefined)
      return { M: Object.fromEntries(Object.entries(value.M as object).map(([k, x]) => [k, convert(x)])) };
    if (Array.isArray(value.L)) return { L: (value.L as unknown[]).map(convert) };
    return value;
  };
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, convert(v)])) as never;
}

/** Set members in one order: DynamoDB does not promise one. */
function normalized(map: AttributeMap): unknown {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    for (const set of ['SS', 'NS', 'BS'])
      if (Array.isArray(o[set])) return { [set]: [...(o[set] as string[])].sort() };
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, walk(x)]));
  };
  return walk(map);
}

async function scanTable(tableName: string): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  let start: Record<string, never> | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({ TableName: tableName, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    for (const raw of page.Items ?? []) {
      const json = toJsonAttributeMap(raw);
      out.set(JSON.stringify(json.pk), normalized(json));
    }
    start = page.LastEvaluatedKey as Record<string, never> | undefined;
  } while (start !== undefined);
  return out;
}

/** Updates, deletes and new items, one after the other, until `stop` says so: the writes that race the backfill. */
async function raceWrites(tableName: string, seeded: number, stop: () => boolean): Promise<number> {
  let n = 0;
  while (!stop() || n < 60) {
    const target = `item#${(n * 7919) % seeded}`;
    const op = n % 4;
    if (op === 0) {
      await dynamodb.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: { pk: { S: target } },
          UpdateExpression: 'SET big = :b, nested.#l = :l ADD tags :t',
          ExpressionAttributeNames: { '#l': 'list' },
          ExpressionAttributeValues: {
            ':b': { N: `-9876543210987654321098765432109876543${n % 10}` },
            ':l': { L: [{ S: `update ${n}` }] },
            ':t': { SS: [`u${n}`] },
          },
        }),
      );
    } else if (op === 1) {
      await dynamodb.send(new DeleteItemCommand({ TableName: tableName, Key: { pk: { S: target } } }));
    } else if (op === 2) {
      await dynamodb.send(
        new PutItemCommand({ TableName: tableName, Item: sdk(item(`new#${n}`, n + 5_000)) }),
      );
    } else {
      await dynamodb.send(new PutItemCommand({ TableName: tableName, Item: sdk(item(target, n + 9_000)) }));
    }
    n++;
  }
  return n;
}

describe('handoff: backfill through the version guard, then the stream from TRIM_HORIZON', () => {
  it('ends with the sink equal to the table, item by item, though writes, updates and deletes raced the backfill', async () => {
    const table = await createTestTable(dynamodb);
    const versions = await createTestTable(dynamodb);
    const seeded = 400;
    for (let i = 0; i < seeded; i += 25) {
      const puts = Array.from({ length: Math.min(25, seeded - i) }, (_, j) => ({
        PutRequest: { Item: sdk(item(`item#${i + j}`, i + j)) },
      }));
      await dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [table.tableName]: puts } }));
    }

    const sink = new ItemStateSink();
    const guarded = versionGuard(sink, {
      store: new DynamoDbVersionStore({
        tableName: versions.tableName,
        client: dynamodb,
        tombstoneSeconds: 7 * 86_400,
      }),
      // DynamoDB Local rounds ApproximateCreationDateTime down to the minute.
      creationTimeResolution: 60,
    });
    const deadLetter = new MemoryDeadLetterSink();
    // One config for both: the backfill runs the function's own routes and sinks.
    const config = {
      routes: [route({ when: () => true, to: guarded })],
      deadLetter,
      metrics: false as const,
    };

    // The stream is on (NEW_AND_OLD_IMAGES) before the backfill starts; the scan's start is its snapshot time.
    let backfillDone = false;
    const [report, raced] = await Promise.all([
      runBackfill(config, {
        source: { scan: { table: table.tableName, segments: 4, pageSize: 20 } },
        dynamodb,
        batchSize: 10,
        concurrency: 2,
      }).finally(() => {
        backfillDone = true;
      }),
      raceWrites(table.tableName, seeded, () => backfillDone),
    ]);
    expect(report.complete).toBe(true);
    expect(raced).toBeGreaterThanOrEqual(60);
    const fromBackfill = sink.written.length;
    expect(fromBackfill).toBeGreaterThan(0);

    // A few more writes after the backfill, then the stream consumer takes over from TRIM_HORIZON.
    await raceWrites(table.tableName, seeded, () => true);
    const emulator = new EventSourceMappingEmulator({ batchSize: 50, handler: createStreamHandler(config) });
    const poller = new StreamPoller({ streams, streamArn: table.streamArn, pollIntervalMs: 20 });
    await poller.runEmulator(emulator, { stopWhenCaughtUp: true, emptyPagesToStop: 10 });

    expect(deadLetter.entries).toEqual([]);
    const tableNow = await scanTable(table.tableName);
    const held = new Map([...sink.items].map(([, image]) => [JSON.stringify(image.pk), normalized(image)]));
    expect(held.size).toBe(tableNow.size);
    for (const [key, expected] of tableNow) expect(held.get(key), key).toEqual(expected);

    // Never an older state over a newer one: what reached the sink rose in version per item,
    // though the stream from TRIM_HORIZON replayed every write older than the backfill's copies.
    const last = new Map<string, string>();
    for (const record of sink.written as ClassifiedRecord[]) {
      const key = itemKeyOf(record);
      const version = recordVersion(record, 60);
      const before = last.get(key);
      if (before !== undefined) expect(before < version, `${key}: ${before} then ${version}`).toBe(true);
      last.set(key, version);
    }
    // Stream records older than the copy's minute (the seeding puts among them) were skipped.
    const copies = sink.written.slice(0, fromBackfill);
    const origin = copies[0]?.origin;
    if (origin?.source !== 'backfill') throw new Error('the backfill wrote no copy first');
    const snapshotMinute = Math.floor(origin.snapshotTime / 60_000) * 60;
    const copied = new Set(copies.map(itemKeyOf));
    const fromStream = sink.written.slice(fromBackfill);
    expect(fromStream.length).toBeGreaterThan(0);
    for (const record of fromStream) {
      expect(record.origin.source).toBe('dynamodb-stream');
      if (copied.has(itemKeyOf(record)))
        expect(record.approximateCreationTime).toBeGreaterThanOrEqual(snapshotMinute);
    }
    await table.drop();
    await versions.drop();
  }, 240_000);
});
