import { describe, expect, it } from 'vitest';
import { EventSourceMappingEmulator } from '../../../../src/local/emulator/emulator.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import { DYNAMODB_SOURCE } from '../../../../src/local/emulator/record-source.js';
import type { LambdaStreamRecord } from '../../../../src/records/types.js';

/** Records of items keyed (pk, sk) with sk spelt as given. */
function keyedBy(spellings: readonly string[]): LambdaStreamRecord[] {
  const builder = new StreamEventBuilder();
  return spellings.map((sk, i) => {
    const record = builder.insert({ pk: 'order', round: i });
    record.dynamodb.Keys = { pk: { S: 'order' }, sk: { N: sk } };
    return record;
  });
}

describe('DYNAMODB_SOURCE.laneKey', () => {
  it('one lane per item by key value: 1.5, 1.50, 15E-1 and 0.15e1 share one, 2.5 has its own', () => {
    const lanes = keyedBy(['1.5', '1.50', '15E-1', '0.15e1', '2.5']).map((r) => DYNAMODB_SOURCE.laneKey(r));
    expect(new Set(lanes.slice(0, 4)).size).toBe(1);
    expect(lanes[4]).not.toBe(lanes[0]);
  });

  it('keys no table could hold share one lane, deep ones included, without a RangeError', () => {
    const [a, b] = keyedBy(['1', '2']) as [LambdaStreamRecord, LambdaStreamRecord];
    let deep: unknown = { S: 'x' };
    for (let i = 0; i < 20_000; i++) deep = { L: [deep] };
    (a.dynamodb.Keys as Record<string, unknown>).pk = deep;
    (b.dynamodb.Keys as Record<string, unknown>).pk = { BOOL: true };
    expect(DYNAMODB_SOURCE.laneKey(a)).toBe(DYNAMODB_SOURCE.laneKey(b));
  });

  it("with ParallelizationFactor, one item's records spelt four ways reach the handler in stream order", async () => {
    const spellings = ['1.5', '1.50', '15E-1', '0.15e1'];
    // Ten rounds of the four spellings: by text they fell in up to four concurrent lanes.
    const input = keyedBy(Array.from({ length: 40 }, (_, i) => spellings[i % 4]!));
    const seen: number[] = [];
    const emulator = new EventSourceMappingEmulator({
      parallelizationFactor: 8,
      batchSize: 3,
      handler: async (event) => {
        await new Promise((resolve) => setImmediate(resolve));
        for (const r of event.Records) seen.push(Number(r.dynamodb.NewImage?.round?.N));
      },
    });
    await emulator.runRecords(input);
    expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });
});
