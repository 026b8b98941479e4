import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { KinesisBridgeFaults } from '../../../../src/local/emulator/kinesis-bridge.js';
import {
  KinesisMappingEmulator,
  type KinesisStreamHandler,
} from '../../../../src/local/emulator/kinesis-emulator.js';
import { KinesisShardReader } from '../../../../src/local/emulator/kinesis-reader.js';
import { createStreamHandler, kinesisSource, type PipelineLogger } from '../../../../src/pipeline/index.js';
import type { ClassifiedRecord } from '../../../../src/records/types.js';
import type { Sink } from '../../../../src/sinks/types.js';
import { createTestKinesisStream, createTestTable } from '../../../support/aws.js';
import { bridgeTableToKinesis, kinesisTestClients } from '../../../support/kinesis-bridge.js';

const { dynamodb, streams, kinesis } = kinesisTestClients();

const ITEMS = 6;
const VERSIONS = 4;

/** A table whose items each get VERSIONS writes (n = 1 … VERSIONS), the items interleaved. */
async function tableWithChanges() {
  const table = await createTestTable(dynamodb);
  for (let n = 1; n <= VERSIONS; n++) {
    for (let i = 0; i < ITEMS; i++) {
      await dynamodb.send(
        new PutItemCommand({
          TableName: table.tableName,
          Item: { pk: { S: `item-${i}` }, n: { N: String(n) } },
        }),
      );
    }
  }
  return table;
}

/** Bridges the table's stream into a fresh Kinesis stream and returns what a Kinesis mapping reads from it. */
async function bridged(options: { precision?: 'MILLISECOND' | 'MICROSECOND'; faults?: KinesisBridgeFaults }) {
  const table = await tableWithChanges();
  const stream = await createTestKinesisStream(kinesis, 2);
  const result = await bridgeTableToKinesis({ streams, kinesis }, table, stream.streamArn, options);
  return { table, stream, result };
}

function reader(streamArn: string) {
  return new KinesisShardReader({ kinesis, streamArn, pollIntervalMs: 10 });
}

describe('KinesisBridge: a table’s Kinesis streaming destination on DynamoDB Local and the Kinesis server', () => {
  it('puts each change in the format of Kinesis Data Streams for DynamoDB, the partition key a hash of the keys', async () => {
    const { table, stream, result } = await bridged({});
    expect(result).toEqual({ changes: ITEMS * VERSIONS, put: ITEMS * VERSIONS, duplicates: 0 });
    const seen: Array<{ partitionKey: string; data: Record<string, unknown>; eventSourceARN?: string }> = [];
    const emulator = new KinesisMappingEmulator({
      handler: async (event) => {
        for (const r of event.Records) {
          seen.push({
            partitionKey: r.kinesis.partitionKey,
            data: JSON.parse(Buffer.from(r.kinesis.data, 'base64').toString('utf8')),
            eventSourceARN: r.eventSourceARN,
          });
        }
      },
    });
    await reader(stream.streamArn).runEmulator(emulator, { stopWhenCaughtUp: true });
    expect(seen).toHaveLength(ITEMS * VERSIONS);
    for (const { data, eventSourceARN } of seen) {
      expect(Object.keys(data).sort()).toEqual(
        [
          'awsRegion',
          'dynamodb',
          'eventID',
          'eventName',
          'eventSource',
          'recordFormat',
          'tableName',
          'userIdentity',
        ].sort(),
      );
      expect(data).toMatchObject({
        awsRegion: 'us-east-1',
        recordFormat: 'application/json',
        tableName: table.tableName,
        eventSource: 'aws:dynamodb',
        userIdentity: null,
      });
      expect(eventSourceARN).toBe(stream.streamArn);
      const d = data.dynamodb as Record<string, unknown>;
      expect(
        Object.keys(d).every((k) =>
          ['ApproximateCreationDateTime', 'Keys', 'NewImage', 'OldImage', 'SizeBytes'].includes(k),
        ),
      ).toBe(true);
      // Milliseconds: 13 digits until 2286.
      expect(String(d.ApproximateCreationDateTime)).toMatch(/^\d{13}$/);
      expect(d).not.toHaveProperty('SequenceNumber');
      expect(d).not.toHaveProperty('StreamViewType');
    }
    // Every change of an item has one partition key, and different items have different ones.
    const keyOf = (data: Record<string, unknown>) =>
      (data.dynamodb as { Keys: { pk: { S: string } } }).Keys.pk.S;
    const partitionKeys = new Map<string, Set<string>>();
    for (const { data, partitionKey } of seen) {
      const set = partitionKeys.get(keyOf(data)) ?? new Set();
      set.add(partitionKey);
      partitionKeys.set(keyOf(data), set);
    }
    expect([...partitionKeys.values()].every((set) => set.size === 1)).toBe(true);
    expect(new Set([...partitionKeys.values()].map((set) => [...set][0])).size).toBe(ITEMS);
    await table.drop();
  });

  it('MICROSECOND precision writes 16-digit creation times that still order each item’s changes', async () => {
    const { table, stream } = await bridged({ precision: 'MICROSECOND' });
    const times = new Map<string, number[]>();
    const emulator = new KinesisMappingEmulator({
      handler: async (event) => {
        for (const r of event.Records) {
          const data = JSON.parse(Buffer.from(r.kinesis.data, 'base64').toString('utf8'));
          expect(String(data.dynamodb.ApproximateCreationDateTime)).toMatch(/^\d{16}$/);
          const list = times.get(data.dynamodb.Keys.pk.S) ?? [];
          list.push(data.dynamodb.ApproximateCreationDateTime);
          times.set(data.dynamodb.Keys.pk.S, list);
        }
      },
    });
    await reader(stream.streamArn).runEmulator(emulator, { stopWhenCaughtUp: true });
    expect(times.size).toBe(ITEMS);
    for (const list of times.values())
      expect(list.every((t, i) => i === 0 || t > (list[i - 1] as number))).toBe(true);
    await table.drop();
  });

  it('injected faults are seeded: the same seed duplicates and reorders the same way', async () => {
    const faults = { seed: 26, duplicateRate: 0.3, reorderWindow: 8 };
    const runs: string[][] = [];
    for (let run = 0; run < 2; run++) {
      const { table, stream, result } = await bridged({ faults });
      expect(result.changes).toBe(ITEMS * VERSIONS);
      expect(result.duplicates).toBeGreaterThan(0);
      expect(result.put).toBe(result.changes + result.duplicates);
      const order: string[] = [];
      const emulator = new KinesisMappingEmulator({
        handler: async (event) => {
          for (const r of event.Records) {
            const data = JSON.parse(Buffer.from(r.kinesis.data, 'base64').toString('utf8'));
            order.push(`${data.dynamodb.Keys.pk.S}#${data.dynamodb.NewImage.n.N}`);
          }
        },
      });
      await reader(stream.streamArn).runEmulator(emulator, { stopWhenCaughtUp: true });
      expect(order).toHaveLength(result.put);
      runs.push(order);
      await table.drop();
    }
    // Same faults both times; and they did reorder: some item's changes arrive out of order.
    const sortedPerShard = (order: string[]) => [...order].sort().join();
    expect(sortedPerShard(runs[0] as string[])).toBe(sortedPerShard(runs[1] as string[]));
    const outOfOrder = (runs[0] as string[]).some((change, i, all) => {
      const [pk, n] = change.split('#');
      return all
        .slice(i + 1)
        .some((later) => later.split('#')[0] === pk && Number(later.split('#')[1]) < Number(n));
    });
    expect(outOfOrder).toBe(true);
  });

  it('end to end: a createStreamHandler function fed through Kinesis hands its sink each change once, in per-item order, despite duplicates and reordering', async () => {
    const { table, stream, result } = await bridged({
      faults: { seed: 7, duplicateRate: 0.4, reorderWindow: 12 },
    });
    expect(result.duplicates).toBeGreaterThan(0);
    const written: ClassifiedRecord[] = [];
    const sink: Sink = {
      name: 'changes',
      write(records) {
        written.push(...records);
        return undefined;
      },
    };
    const handler = createStreamHandler({
      source: kinesisSource(),
      routes: [{ when: ['insert', 'modify'], to: sink }],
      logger: pino({ level: 'silent' }) as unknown as PipelineLogger,
      metrics: false,
    });
    const emulator = new KinesisMappingEmulator({
      batchSize: 1000,
      functionResponseTypes: ['ReportBatchItemFailures'],
      handler: ((event: unknown, context: Context) =>
        handler(event as never, context)) as KinesisStreamHandler,
    });
    const shards = await reader(stream.streamArn).runEmulator(emulator, { stopWhenCaughtUp: true });
    expect(shards.reduce((n, s) => n + s.records, 0)).toBe(result.put);
    const versions = new Map<string, number[]>();
    for (const record of written) {
      const pk = String(record.keys.pk);
      const list = versions.get(pk) ?? [];
      list.push(Number((record.newImage as { n: unknown }).n));
      versions.set(pk, list);
    }
    expect(versions.size).toBe(ITEMS);
    for (const list of versions.values()) expect(list).toEqual([1, 2, 3, 4]);
    await table.drop();
  });
});
