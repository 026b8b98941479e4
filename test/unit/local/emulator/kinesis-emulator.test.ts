import type { KinesisStreamEvent } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { forKinesis, ttlDeletes } from '../../../../src/filters/index.js';
import { ManualClock } from '../../../../src/local/emulator/clock.js';
import { MemoryFailureDestination } from '../../../../src/local/emulator/destinations.js';
import type { EmulatorEvent } from '../../../../src/local/emulator/emulator.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import { KinesisMappingEmulator } from '../../../../src/local/emulator/kinesis-emulator.js';
import { type LambdaKinesisRecord, toKinesisRecord } from '../../../../src/records/index.js';
import type { KinesisInvocationRecord } from '../../../../src/records/on-failure-record.js';

const STREAM = 'arn:aws:kinesis:us-east-1:000000000000:stream/orders-changes';
const T0 = 1_767_225_600;

/** Kinesis sequence numbers are long (56 digits on AWS): past a JS number, so compared as BigInt. */
const seq = (i: number) =>
  (49_000_000_000_000_000_000_000_000_000_000_000_000_000_000_000n + BigInt(i)).toString();

function kinesisRecords(
  count: number,
  options: { key?: (i: number) => string; arrival?: (i: number) => number } = {},
): LambdaKinesisRecord[] {
  const builder = new StreamEventBuilder({ now: T0 });
  return Array.from({ length: count }, (_, i) => {
    const change = builder.insert({ pk: options.key?.(i) ?? `item-${i + 1}`, n: i + 1 });
    const at = options.arrival?.(i) ?? T0;
    return toKinesisRecord(change, {
      sequenceNumber: seq(i + 1),
      tableName: 'orders',
      streamArn: STREAM,
      creationTime: at * 1000,
      ...(options.key ? { partitionKey: options.key(i) } : {}),
    });
  });
}

const seqs = (event: KinesisStreamEvent) => event.Records.map((r) => r.kinesis.sequenceNumber);
const ofType = (log: EmulatorEvent[], type: EmulatorEvent['type']) => log.filter((e) => e.type === type);

describe('KinesisMappingEmulator (the Lambda guide’s Kinesis rules)', () => {
  it('batches by BatchSize in shard order and checkpoints the last Kinesis sequence number', async () => {
    const input = kinesisRecords(7);
    const seen: string[][] = [];
    const emulator = new KinesisMappingEmulator({
      batchSize: 3,
      handler: async (event) => {
        seen.push(seqs(event));
      },
    });
    const result = await emulator.runShard({
      shardId: 'shardId-000000000000',
      streamArn: STREAM,
      pages: [input],
    });
    const all = input.map((r) => r.kinesis.sequenceNumber);
    expect(seen).toEqual([all.slice(0, 3), all.slice(3, 6), all.slice(6)]);
    expect(result.checkpoint).toBe(all[6]);
  });

  it('ReportBatchItemFailures: the lowest failed Kinesis sequence number is the checkpoint, the rest is redelivered', async () => {
    const input = kinesisRecords(6);
    const all = input.map((r) => r.kinesis.sequenceNumber);
    const seen: string[][] = [];
    const checkpoints: string[] = [];
    const emulator = new KinesisMappingEmulator({
      batchSize: 10,
      functionResponseTypes: ['ReportBatchItemFailures'],
      handler: async (event) => {
        seen.push(seqs(event));
        // The first call reports records 5 and 3 failed (out of order): 3 is the lowest.
        return seen.length === 1
          ? {
              batchItemFailures: [{ itemIdentifier: all[4] as string }, { itemIdentifier: all[2] as string }],
            }
          : { batchItemFailures: [] };
      },
    });
    const result = await emulator.runShard({
      shardId: 'shardId-000000000000',
      streamArn: STREAM,
      pages: [input],
      onCheckpoint: (s) => {
        checkpoints.push(s);
      },
    });
    expect(seen).toEqual([all, all.slice(2)]);
    expect(checkpoints).toEqual([all[1], all[5]]);
    expect(result.checkpoint).toBe(all[5]);
  });

  it('BisectBatchOnFunctionError splits a failing batch until the poison record is alone; MaximumRetryAttempts then sends it to the destination under KinesisBatchInfo', async () => {
    const input = kinesisRecords(8);
    const poison = input[5]?.kinesis.sequenceNumber as string;
    const destination = new MemoryFailureDestination<KinesisInvocationRecord>();
    const emulator = new KinesisMappingEmulator({
      batchSize: 8,
      bisectBatchOnFunctionError: true,
      maximumRetryAttempts: 1,
      onFailure: destination,
      handler: async (event) => {
        if (seqs(event).includes(poison)) throw new Error('poison');
      },
    });
    const result = await emulator.runShard({
      shardId: 'shardId-000000000003',
      streamArn: STREAM,
      pages: [input],
    });
    expect(result.discarded).toBe(1);
    expect(result.checkpoint).toBe(input[7]?.kinesis.sequenceNumber);
    const [record] = destination.records;
    expect(record).not.toHaveProperty('DDBStreamBatchInfo');
    expect(record?.KinesisBatchInfo).toMatchObject({
      shardId: 'shardId-000000000003',
      startSequenceNumber: poison,
      endSequenceNumber: poison,
      batchSize: 1,
      streamArn: STREAM,
    });
    expect(record?.requestContext.condition).toBe('RetryAttemptsExhausted');
  });

  it('MaximumRecordAgeInSeconds counts from approximateArrivalTimestamp', async () => {
    // Records 1–2 arrived 10 minutes before the clock, 3–4 now: an age limit of 5 minutes drops the first two.
    const clock = new ManualClock((T0 + 600) * 1000);
    const input = kinesisRecords(4, { arrival: (i) => (i < 2 ? T0 : T0 + 600) });
    const destination = new MemoryFailureDestination<KinesisInvocationRecord>();
    const seen: string[][] = [];
    const emulator = new KinesisMappingEmulator({
      clock,
      maximumRecordAgeInSeconds: 300,
      onFailure: destination,
      handler: async (event) => {
        seen.push(seqs(event));
      },
    });
    await emulator.runShard({ shardId: 'shardId-000000000000', streamArn: STREAM, pages: [input] });
    expect(seen).toEqual([input.slice(2).map((r) => r.kinesis.sequenceNumber)]);
    expect(destination.records[0]?.requestContext.condition).toBe('RecordAgeExceeded');
    expect(destination.records[0]?.KinesisBatchInfo.batchSize).toBe(2);
  });

  it('FilterCriteria match the decoded data: a forKinesis(ttlDeletes()) mapping passes no insert', async () => {
    const input = kinesisRecords(3);
    let invoked = 0;
    const emulator = new KinesisMappingEmulator({
      filterPatterns: forKinesis([ttlDeletes()]),
      handler: async () => {
        invoked++;
      },
    });
    const result = await emulator.runShard({
      shardId: 'shardId-000000000000',
      streamArn: STREAM,
      pages: [input],
    });
    expect(invoked).toBe(0);
    expect(result.filtered).toBe(3);
    expect(result.checkpoint).toBe(input[2]?.kinesis.sequenceNumber);
  });

  it('tumbling windows open and close by arrival time and carry the state', async () => {
    // Two records in the window from T0, one 70 s later: the first window's final call sees a count of 2.
    const input = kinesisRecords(3, { arrival: (i) => (i < 2 ? T0 + i : T0 + 70) });
    const finals: unknown[] = [];
    const emulator = new KinesisMappingEmulator({
      tumblingWindowInSeconds: 60,
      handler: async (event) => {
        const count = ((event.state?.count as number | undefined) ?? 0) + event.Records.length;
        if (event.isFinalInvokeForWindow) finals.push({ window: event.window?.start, count });
        return { state: { count } };
      },
    });
    await emulator.runShard({ shardId: 'shardId-000000000000', streamArn: STREAM, pages: [input] });
    expect(finals).toEqual([
      { window: new Date(Math.floor(T0 / 60) * 60_000).toISOString().replace('.000Z', 'Z'), count: 2 },
      { window: new Date(Math.floor((T0 + 70) / 60) * 60_000).toISOString().replace('.000Z', 'Z'), count: 1 },
    ]);
  });

  it('a record whose sequence number is no Kinesis sequence number is refused by name', async () => {
    const [record] = kinesisRecords(1);
    const bad = { ...record, kinesis: { ...record?.kinesis, sequenceNumber: '01' } } as LambdaKinesisRecord;
    const emulator = new KinesisMappingEmulator({ handler: async () => undefined });
    await expect(
      emulator.runShard({ shardId: 'shardId-000000000000', streamArn: STREAM, pages: [[bad]] }),
    ).rejects.toMatchObject({ name: 'UnstreamableRecordError', sequenceNumber: '01' });
  });

  it('ParallelizationFactor: concurrent batches, yet each partition key’s records are invoked in sequence order, once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 5 }),
        async (keys, factor, batchSize) => {
          const input = kinesisRecords(keys.length, { key: (i) => `pk-${keys[i]}` });
          const byKey = new Map<string, bigint[]>();
          const emulator = new KinesisMappingEmulator({
            parallelizationFactor: factor,
            batchSize,
            keepLog: false,
            handler: async (event) => {
              // Yield so lanes interleave.
              await new Promise((resolve) => setImmediate(resolve));
              for (const r of event.Records) {
                const list = byKey.get(r.kinesis.partitionKey) ?? [];
                list.push(BigInt(r.kinesis.sequenceNumber));
                byKey.set(r.kinesis.partitionKey, list);
              }
            },
          });
          await emulator.runShard({ shardId: 'shardId-000000000000', streamArn: STREAM, pages: [input] });
          let total = 0;
          for (const list of byKey.values()) {
            total += list.length;
            for (let i = 1; i < list.length; i++) expect(list[i]! > list[i - 1]!).toBe(true);
          }
          expect(total).toBe(keys.length);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('logs every decision with Kinesis sequence numbers', async () => {
    const input = kinesisRecords(2);
    const emulator = new KinesisMappingEmulator({ handler: async () => undefined });
    await emulator.runShard({ shardId: 'shardId-000000000000', streamArn: STREAM, pages: [input] });
    const [invoke] = ofType(emulator.log, 'invoke');
    expect(invoke).toMatchObject({ sequenceNumbers: input.map((r) => r.kinesis.sequenceNumber) });
  });
});
