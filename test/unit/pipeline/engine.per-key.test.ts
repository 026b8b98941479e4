import { describe, expect, it } from 'vitest';
import { processBatch } from '../../../src/pipeline/index.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { batch, quiet, RecordingDeadLetter, RecordingSink, seq } from './fixtures.js';

function deferredTick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('per-key mode', () => {
  it('keeps order within each key, runs keys in parallel up to the bound and never beyond', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const sink = new RecordingSink(
      's',
      () => false,
      async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await deferredTick();
        await deferredTick();
        inFlight--;
      },
    );
    const event = batch(40, (i) => ({ pk: `key-${i % 8}`, kind: i % 5 === 0 ? 'modify' : 'insert' }));
    const response = await processBatch(event, {
      ...quiet,
      ordering: { mode: 'per-key', concurrency: 3 },
      routes: [{ when: ['insert', 'modify'], to: sink }],
    });
    expect(response.batchItemFailures).toEqual([]);
    expect(maxInFlight).toBe(3);
    expect(sink.calls).toHaveLength(8);
    for (const call of sink.calls) {
      // One call per key, in stream order within it.
      const sorted = [...call].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
      expect(call).toEqual(sorted);
      const keys = new Set(call.map((s) => Number((BigInt(s) - 10n ** 20n) / 100n) % 8));
      expect(keys.size).toBe(1);
    }
    expect(sink.written.sort()).toEqual(event.Records.map((r) => r.dynamodb.SequenceNumber).sort());
  });

  it("one item's records are one lane by key value, however its number key is spelled (1.5, 1.50, 15E-1, 0.15e1)", async () => {
    const spellings = ['1.5', '1.50', '15E-1', '0.15e1', '2.5', '25e-1'];
    const event = batch(spellings.length, (i) => ({ kind: i % 3 === 0 ? 'insert' : 'modify' }));
    event.Records.forEach((r, i) => {
      r.dynamodb.Keys = { pk: { S: 'order' }, sk: { N: spellings[i]! } };
    });
    const sink = new RecordingSink('s', () => false, deferredTick);
    const response = await processBatch(event, {
      ...quiet,
      ordering: { mode: 'per-key', concurrency: 4 },
      routes: [{ when: ['insert', 'modify'], to: sink }],
    });
    expect(response.batchItemFailures).toEqual([]);
    // Two items (1.5 and 2.5): one call each, in stream order.
    expect(sink.calls).toEqual([
      [seq(0), seq(1), seq(2), seq(3)],
      [seq(4), seq(5)],
    ]);
  });

  it('stops a key at its first failure and reports the lowest failed sequence number over all keys', async () => {
    // key-1 fails at 9, key-2 fails at 6; other keys succeed.
    const sink = new RecordingSink('s', (s) => s === seq(9) || s === seq(6));
    const records: ClassifiedRecord[] = [];
    const observer = new RecordingSink(
      'observer',
      () => false,
      (batchOf) => {
        records.push(...batchOf);
      },
    );
    const response = await processBatch(
      batch(16, (i) => ({ pk: `key-${i % 4}` })),
      {
        ...quiet,
        retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
        ordering: { mode: 'per-key', concurrency: 2 },
        routes: [{ when: 'insert', to: [sink, observer] }],
      },
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(6) }]);
    // After its failure, a key's later records never reach the next sink.
    const observed = records.map((r) => r.sequenceNumber);
    expect(observed).not.toContain(seq(9));
    expect(observed).not.toContain(seq(6));
    expect(observed).not.toContain(seq(10));
  });

  it('a record whose Keys are nested too deep to serialize is dead-lettered, its batch-mates delivered', async () => {
    const sink = new RecordingSink('s');
    const dlq = new RecordingDeadLetter();
    const event = batch(3);
    let deep: unknown = { S: 'x' };
    for (let i = 0; i < 20_000; i++) deep = { L: [deep] };
    (event.Records[1]!.dynamodb.Keys as Record<string, unknown>).pk = deep;
    const response = await processBatch(event, {
      ...quiet,
      deadLetter: dlq,
      ordering: { mode: 'per-key', concurrency: 2 },
      routes: [{ when: 'insert', to: sink }],
    });
    expect(response.batchItemFailures).toEqual([]);
    expect([...sink.written].sort()).toEqual([seq(0), seq(2)]);
    expect(dlq.entries.map((e) => [e.sequenceNumber, e.reason])).toEqual([[seq(1), 'malformed']]);
  });
});
