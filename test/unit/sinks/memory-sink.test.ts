import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { parseStreamEvent } from '../../../src/records/index.js';
import { InjectedSinkFailure } from '../../../src/sinks/errors.js';
import { DeadLetterSendError, MemoryDeadLetterSink, MemorySink } from '../../../src/sinks/index.js';
import { sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { runSinkTestKit } from '../../../src/sinks/testkit.js';
import type { DeadLetterEntry } from '../../../src/sinks/types.js';

runSinkTestKit({ name: 'MemorySink', create: () => new MemorySink(), read: (sink) => sink.records });

// A sink that fails every 7th record on first delivery: the kit's retry loop must converge.
runSinkTestKit({
  name: 'MemorySink with transient failures',
  create: () =>
    new MemorySink({ failWhen: (r, delivery) => delivery === 1 && BigInt(r.sequenceNumber) % 7n === 0n }),
  read: (sink) => sink.records,
});

// The kit's failure-injection hook: the chosen records fail once, on their next delivery.
const injected = new WeakMap<MemorySink, Set<string>>();
runSinkTestKit({
  name: 'MemorySink with injected failures',
  create: () => {
    const failOnce = new Set<string>();
    const sink = new MemorySink({ failWhen: (r) => failOnce.delete(r.sequenceNumber) });
    injected.set(sink, failOnce);
    return sink;
  },
  read: (sink) => sink.records,
  injectFailures: (sink, sequenceNumbers) => {
    for (const seq of sequenceNumbers) injected.get(sink)?.add(seq);
  },
});

describe('MemorySink', () => {
  it('reports the failures its rule chooses, as records of the batch, and keeps the rest in order', () => {
    const batch = sampleTtlDeletes(10);
    const sink = new MemorySink({ failWhen: (r) => r.sequenceNumber === batch[3]?.sequenceNumber });
    const result = sink.write(batch);
    expect(result.failed?.map((f) => f.sequenceNumber)).toEqual([batch[3]?.sequenceNumber]);
    expect(result.failed?.[0]?.error).toBeInstanceOf(InjectedSinkFailure);
    expect(sink.records.map((r) => r.sequenceNumber)).toEqual(
      batch.filter((_, i) => i !== 3).map((r) => r.sequenceNumber),
    );
    expect(sink.batches).toBe(1);
  });

  it('counts deliveries per record so a rule can fail only the first attempts', () => {
    const batch = sampleTtlDeletes(3);
    const sink = new MemorySink({
      failWhen: (_r, delivery) => (delivery < 3 ? new Error('not yet') : undefined),
    });
    expect(sink.write(batch).failed).toHaveLength(3);
    expect(sink.write(batch).failed).toHaveLength(3);
    expect(sink.write(batch)).toEqual({});
    expect(sink.records).toHaveLength(3);
  });

  it('rejects unknown options', () => {
    expect(() => new MemorySink({ failwhen: () => true } as never)).toThrow(InvalidOptionsError);
    expect(() => new MemorySink({ failWhen: 'yes' } as never)).toThrow(/failWhen/);
  });

  it("keeps two shards' records that share a sequence number under Lambda's shard-less events, and still drops a redelivery", () => {
    const [first] = sampleTtlDeletes(1);
    // The same sequence number from another shard: another record, another eventID, same stand-in segment.
    const [other] = parseStreamEvent({
      Records: [{ ...first!.raw, eventID: 'other-shard-event', dynamodb: { ...first!.raw.dynamodb } }],
    });
    const sink = new MemorySink();
    sink.write([first!]);
    sink.write([other!]);
    sink.write([first!, other!]);
    expect(sink.records.map((r) => r.eventID).sort()).toEqual([first!.eventID, 'other-shard-event'].sort());
  });

  it('clear() forgets records and deliveries', () => {
    const sink = new MemorySink();
    sink.write(sampleTtlDeletes(2));
    sink.clear();
    expect(sink.records).toEqual([]);
    sink.write(sampleTtlDeletes(2));
    expect(sink.records).toHaveLength(2);
  });
});

function entry(seq: string): DeadLetterEntry {
  return {
    reason: 'malformed',
    record: { eventID: `e-${seq}` },
    eventID: `e-${seq}`,
    sequenceNumber: seq,
    eventSourceARN: undefined,
    error: { name: 'MalformedRecordError', message: 'bad' },
    attempts: 1,
    at: '2026-01-15T10:00:00.000Z',
  };
}

describe('MemoryDeadLetterSink', () => {
  it('keeps entries in the order sent', async () => {
    const dlq = new MemoryDeadLetterSink();
    await dlq.send([entry('1'), entry('2')], {});
    await dlq.send([entry('3')], {});
    expect(dlq.entries.map((e) => e.sequenceNumber)).toEqual(['1', '2', '3']);
  });

  it('throws a DeadLetterSendError naming the rejected entries and stores nothing of that send', async () => {
    const dlq = new MemoryDeadLetterSink({ failWhen: (e) => e.sequenceNumber === '2' });
    const error = await dlq.send([entry('1'), entry('2')], {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadLetterSendError);
    expect((error as DeadLetterSendError).sequenceNumbers).toEqual(['2']);
    expect(dlq.entries).toEqual([]);
  });
});
