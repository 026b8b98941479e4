import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { processBatch } from '../../../src/pipeline/index.js';
import { batch, quiet, RecordingDeadLetter, RecordingSink, seq } from './fixtures.js';

const scenario = fc.record({
  size: fc.integer({ min: 1, max: 40 }),
  keys: fc.integer({ min: 1, max: 6 }),
  perKey: fc.boolean(),
  withDeadLetter: fc.boolean(),
  attempts: fc.integer({ min: 1, max: 3 }),
  // Per record and sink: 0 ok, 1 transient (fails once), 2 poison (always fails), 3 the sink throws.
  faultsA: fc.array(fc.constantFrom(0, 0, 0, 0, 1, 2, 3), { minLength: 40, maxLength: 40 }),
  faultsB: fc.array(fc.constantFrom(0, 0, 0, 0, 1, 2), { minLength: 40, maxLength: 40 }),
});

function rule(faults: number[]) {
  return (sequenceNumber: string, attempt: number): boolean | 'throw' => {
    const fault = faults[Number((BigInt(sequenceNumber) - 10n ** 20n) / 100n)];
    if (fault === 1) return attempt === 1;
    if (fault === 2) return true;
    if (fault === 3) return attempt === 1 ? 'throw' : false;
    return false;
  };
}

describe('batch response properties', () => {
  it('reports at most one identifier, always a sequence number of the batch, and every record before it is written or dead-lettered', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const a = new RecordingSink('a', rule(s.faultsA));
        const b = new RecordingSink('b', rule(s.faultsB));
        const dlq = s.withDeadLetter ? new RecordingDeadLetter() : undefined;
        const event = batch(s.size, (i) => ({
          pk: `k${i % s.keys}`,
          kind: i % 3 === 0 ? 'modify' : 'insert',
        }));
        const response = await processBatch(event, {
          ...quiet,
          retry: { attempts: s.attempts, baseDelayMs: 0, maxDelayMs: 0 },
          ...(dlq ? { deadLetter: dlq } : {}),
          ordering: s.perKey ? { mode: 'per-key', concurrency: 2 } : 'ordered',
          routes: [
            { when: ['insert', 'modify'], to: a },
            { when: 'insert', to: b },
          ],
        });
        const sequenceNumbers = event.Records.map((r) => r.dynamodb.SequenceNumber);
        expect(response.batchItemFailures.length).toBeLessThanOrEqual(1);
        const reported = response.batchItemFailures[0]?.itemIdentifier;
        if (reported !== undefined) {
          expect(reported).not.toBe('');
          expect(sequenceNumbers).toContain(reported);
        }
        const cutoff = reported === undefined ? s.size : sequenceNumbers.indexOf(reported);
        const lettered = new Set((dlq?.entries ?? []).map((e) => `${e.sinkName}/${e.sequenceNumber}`));
        for (let i = 0; i < cutoff; i++) {
          const sq = seq(i);
          // Done = each of its routes wrote it or dead-lettered it.
          expect(a.written.includes(sq) || lettered.has(`a/${sq}`)).toBe(true);
          if (i % 3 !== 0) expect(b.written.includes(sq) || lettered.has(`b/${sq}`)).toBe(true);
        }
        if (reported !== undefined) {
          // The reported record is really not done: it is the lowest failed one.
          const i = cutoff;
          const doneA = a.written.includes(reported) || lettered.has(`a/${reported}`);
          const doneB = i % 3 === 0 || b.written.includes(reported) || lettered.has(`b/${reported}`);
          expect(doneA && doneB).toBe(false);
        }
        if (dlq !== undefined) {
          // With a dead-letter sink a poison record never blocks the shard.
          expect(response.batchItemFailures).toEqual([]);
        }
      }),
      { numRuns: 300 },
    );
  });
});
