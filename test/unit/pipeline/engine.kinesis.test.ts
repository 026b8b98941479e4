import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createPipeline,
  createStreamHandler,
  createWindowHandler,
  kinesisSource,
} from '../../../src/pipeline/index.js';
import {
  EventSourceMismatchError,
  type LambdaKinesisRecord,
  toKinesisRecord,
} from '../../../src/records/index.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import {
  RecordingDeadLetter,
  RecordingSink,
  type RecordSpec,
  silentLogger,
  streamRecord,
} from './fixtures.js';

const KINESIS_ARN = 'arn:aws:kinesis:us-east-1:123456789012:stream/orders-changes';

/** Kinesis sequence numbers: 56 digits, increasing. */
function kseq(i: number): string {
  return (4965782840918770152001999524250839011995335832519n * 10_000_000n + BigInt(i) * 1000n).toString();
}

/** Stream record `id` (eventID event-<id>) as the Kinesis record at batch position `position`. */
function kinesis(
  id: number,
  position: number,
  spec: RecordSpec & { createdMs?: number } = {},
): LambdaKinesisRecord {
  const created = spec.createdMs ?? 1_800_000_000_000 + id;
  return toKinesisRecord(streamRecord(id, spec), {
    sequenceNumber: kseq(position),
    tableName: 'orders',
    creationTime: created,
    streamArn: KINESIS_ARN,
  });
}

function kinesisBatch(records: LambdaKinesisRecord[]) {
  return { Records: records };
}

/** A sink that keeps what it was handed, in order. */
class Keeping extends RecordingSink {
  readonly records: ClassifiedRecord[] = [];
  constructor(name = 'keep', failWhen?: (sequenceNumber: string) => boolean) {
    super(name, failWhen, (records) => {
      this.records.push(...records);
    });
  }
}

describe('a Kinesis batch through the pipeline', () => {
  it('reaches the same routes, handlers and sinks as a stream batch', async () => {
    const sink = new Keeping();
    const handled: string[] = [];
    const pipeline = createPipeline({
      source: kinesisSource(),
      routes: [{ when: ['insert', 'modify'], to: sink }],
      handlers: { 'user-delete': (r) => void handled.push(r.sequenceNumber) },
      logger: silentLogger(),
      metrics: false,
    });
    const event = kinesisBatch([
      kinesis(0, 0),
      kinesis(1, 1, { kind: 'modify' }),
      kinesis(2, 2, { kind: 'user-delete' }),
    ]);
    expect(await pipeline.process(event)).toEqual({ batchItemFailures: [] });
    expect(sink.records.map((r) => [r.kind, r.tableName, r.sequenceNumber])).toEqual([
      ['insert', 'orders', kseq(0)],
      ['modify', 'orders', kseq(1)],
    ]);
    expect(handled).toEqual([kseq(2)]);
  });

  it('fails a batch from the other source whole, at once, with EventSourceMismatchError', async () => {
    const sink = new Keeping();
    const kinesisPipeline = createPipeline({
      source: kinesisSource(),
      routes: [{ when: () => true, to: sink }],
      logger: silentLogger(),
    });
    const streamPipeline = createPipeline({
      routes: [{ when: () => true, to: sink }],
      logger: silentLogger(),
    });
    await expect(kinesisPipeline.process({ Records: [streamRecord(0)] })).rejects.toThrow(
      EventSourceMismatchError,
    );
    await expect(streamPipeline.process(kinesisBatch([kinesis(0, 0)]))).rejects.toThrow(
      EventSourceMismatchError,
    );
    expect(sink.records).toEqual([]);
    const auto = createPipeline({
      source: kinesisSource({ alsoDynamoDBStream: true }),
      routes: [{ when: () => true, to: sink }],
      logger: silentLogger(),
    });
    await auto.process(kinesisBatch([kinesis(0, 0)]));
    await auto.process({ Records: [streamRecord(1)] });
    expect(sink.records.map((r) => r.origin.source)).toEqual(['kinesis', 'dynamodb-stream']);
  });

  it('dead-letters bad data with its Kinesis sequence number; the batch goes on', async () => {
    const sink = new Keeping();
    const dlq = new RecordingDeadLetter();
    const pipeline = createPipeline({
      source: kinesisSource(),
      routes: [{ when: () => true, to: sink }],
      deadLetter: dlq,
      logger: silentLogger(),
      metrics: false,
    });
    const bad = kinesis(1, 1);
    bad.kinesis.data = 'bm90IGpzb24=';
    const result = await pipeline.process(kinesisBatch([kinesis(0, 0), bad, kinesis(2, 2)]));
    expect(result).toEqual({ batchItemFailures: [] });
    expect(sink.records.map((r) => r.sequenceNumber)).toEqual([kseq(0), kseq(2)]);
    expect(dlq.entries.map((e) => [e.reason, e.sequenceNumber])).toEqual([['malformed', kseq(1)]]);
    expect(dlq.entries[0]!.record).toBe(bad);
  });

  it('hands an item its records in creation-time order and drops exact duplicates, counted', async () => {
    const sink = new Keeping();
    const lines: string[] = [];
    const pipeline = createPipeline({
      source: kinesisSource(),
      routes: [{ when: () => true, to: sink }],
      logger: silentLogger(),
      metrics: { namespace: 'T', writer: { write: (line: string) => void lines.push(line) } },
    });
    // Item A: change 10 (t=3) arrives before change 11 (t=1), and 10 arrives twice.
    const a10 = kinesis(10, 0, { pk: 'A', kind: 'modify', createdMs: 1_800_000_000_003 });
    const b20 = kinesis(20, 1, { pk: 'B' });
    const a11 = kinesis(11, 2, { pk: 'A', createdMs: 1_800_000_000_001 });
    const a10again = { ...a10, kinesis: { ...a10.kinesis, sequenceNumber: kseq(3) } };
    await pipeline.process(kinesisBatch([a10, b20, a11, a10again]));
    expect(sink.records.map((r) => r.eventID)).toEqual(['event-11', 'event-20', 'event-10']);
    const emf = JSON.parse(lines[0]!);
    expect([emf.Records, emf.Duplicates, emf.Inserts, emf.Modifies]).toEqual([4, 1, 2, 1]);
  });

  it('reports the lowest sequence number not done, even after reordering', async () => {
    // Item A's later change (position 0) was moved after its earlier one (position 2); the sink
    // rejects the earlier change, now at position 0, whose sequence number is the higher.
    const sink = new Keeping('keep', (s) => s === kseq(2));
    const pipeline = createPipeline({
      source: kinesisSource(),
      routes: [{ when: () => true, to: sink }],
      logger: silentLogger(),
      metrics: false,
      retry: { attempts: 1 },
    });
    const event = kinesisBatch([
      kinesis(10, 0, { pk: 'A', createdMs: 1_800_000_000_009 }),
      kinesis(20, 1, { pk: 'B' }),
      kinesis(11, 2, { pk: 'A', createdMs: 1_800_000_000_001 }),
    ]);
    expect(await pipeline.process(event)).toEqual({ batchItemFailures: [{ itemIdentifier: kseq(0) }] });
  });

  it('dead-letters no record given up at or past the reported sequence number, even one moved before the cut-off', async () => {
    // After reordering, position 1 holds item A's earlier change (kseq(3)) and position 3 its later
    // one (kseq(1)). The later change fails (unrouted) and is reported: Lambda redelivers from
    // kseq(1), which takes in kseq(3) as well, so kseq(3), given up at position 1, is not
    // dead-lettered; kseq(0), given up below the report, is.
    const dlq = new RecordingDeadLetter();
    const failing = new Set([kseq(0), kseq(3)]);
    const pipeline = createPipeline({
      source: kinesisSource(),
      routes: [{ when: (r) => r.eventID !== 'event-10', to: new Keeping('keep', (s) => failing.has(s)) }],
      onUnrouted: 'fail',
      deadLetter: dlq,
      logger: silentLogger(),
      metrics: false,
      retry: { attempts: 1 },
    });
    const event = kinesisBatch([
      kinesis(30, 0, { pk: 'C' }),
      kinesis(10, 1, { pk: 'A', createdMs: 1_800_000_000_009 }),
      kinesis(20, 2, { pk: 'B' }),
      kinesis(11, 3, { pk: 'A', createdMs: 1_800_000_000_001 }),
    ]);
    expect(await pipeline.process(event)).toEqual({ batchItemFailures: [{ itemIdentifier: kseq(1) }] });
    expect(dlq.entries.map((e) => e.sequenceNumber)).toEqual([kseq(0)]);
  });

  it('for any arrival order and duplicates: each change once, per item in creation order, and nothing not done beyond the report', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ item: fc.integer({ min: 0, max: 3 }), dup: fc.boolean(), fail: fc.boolean() }), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.infiniteStream(fc.nat()),
        async (changes, shuffleSeeds) => {
          // Change k of an item is created at t = k; arrival order is shuffled, duplicates appended at random places.
          const made = changes.map((c, id) => ({ ...c, id, created: 1_800_000_000_000 + id }));
          const arrival = [...made];
          for (let i = arrival.length - 1; i > 0; i--) {
            const j = shuffleSeeds.next().value % (i + 1);
            [arrival[i], arrival[j]] = [arrival[j]!, arrival[i]!];
          }
          const withDups = arrival.flatMap((c) => (c.dup ? [c, c] : [c]));
          const records = withDups.map((c, position) =>
            kinesis(c.id, position, { pk: `item-${c.item}`, createdMs: c.created }),
          );
          const failing = new Set(withDups.flatMap((c, p) => (c.fail ? [kseq(p)] : [])));
          const sink = new Keeping('keep', (s) => failing.has(s));
          const pipeline = createPipeline({
            source: kinesisSource(),
            routes: [{ when: () => true, to: sink }],
            logger: silentLogger(),
            metrics: false,
            retry: { attempts: 1 },
          });
          const result = await pipeline.process(kinesisBatch(records));
          const handed = sink.records.map((r) => r.eventID);
          expect(new Set(handed).size).toBe(handed.length);
          for (let item = 0; item < 4; item++) {
            const times = sink.records
              .filter((r) => r.keys.pk === `item-${item}`)
              .map((r) => (r.origin.source === 'kinesis' ? r.origin.creationTime : 0));
            expect(times).toEqual([...times].sort((x, y) => x - y));
          }
          const written = new Set(sink.written);
          const report = result.batchItemFailures[0]?.itemIdentifier;
          for (const r of records) {
            const s = r.kinesis.sequenceNumber;
            const doneOrRetried =
              written.has(s) ||
              (report !== undefined && BigInt(s) >= BigInt(report)) ||
              records.some(
                (o) => o !== r && o.kinesis.data === r.kinesis.data && written.has(o.kinesis.sequenceNumber),
              );
            expect(doneOrRetried).toBe(true);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('createStreamHandler and createWindowHandler with a Kinesis source', () => {
  it('the stream handler takes a Kinesis event', async () => {
    const sink = new Keeping();
    const handler = createStreamHandler({
      source: kinesisSource(),
      routes: [{ when: () => true, to: sink }],
      logger: silentLogger(),
    });
    const result = await handler(kinesisBatch([kinesis(0, 0)]) as never, {} as never);
    expect(result).toEqual({ batchItemFailures: [] });
    expect(sink.records).toHaveLength(1);
  });

  it('the window handler folds a Kinesis batch once per change', async () => {
    const handler = createWindowHandler<number>({
      source: kinesisSource(),
      initial: () => 0,
      reduce: (count, records) => count + records.length,
      onWindowEnd: () => undefined,
    });
    const first = kinesis(0, 0);
    const event = {
      ...kinesisBatch([
        first,
        { ...first, kinesis: { ...first.kinesis, sequenceNumber: kseq(1) } },
        kinesis(2, 2),
      ]),
      window: { start: '2027-01-15T08:00:00Z', end: '2027-01-15T08:05:00Z' },
      state: {},
      shardId: 'shardId-000000000000',
      eventSourceARN: KINESIS_ARN,
      isFinalInvokeForWindow: false,
      isWindowTerminatedEarly: false,
    };
    const result = await handler(event as never, {} as never);
    expect(result.state.value).toBe(2);
  });
});
