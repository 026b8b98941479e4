import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { orderKinesisBatch } from '../../../src/pipeline/kinesis-order.js';
import { toKinesisRecord } from '../../../src/records/kinesis-encode.js';
import { createRecordParser } from '../../../src/records/parse.js';
import type { AttributeMap } from '../../../src/records/types.js';

const parse = createRecordParser({ source: 'kinesis' });

/** Change `id` of the item `keys` of `table`, created at `ms`, at batch position `position`, under any partition key. */
function change(
  id: number,
  position: number,
  o: { keys: AttributeMap; ms: number; table?: string; partitionKey?: string },
) {
  return toKinesisRecord(
    {
      eventID: `event-${id}`,
      eventName: 'MODIFY',
      eventSource: 'aws:dynamodb',
      awsRegion: 'us-east-1',
      dynamodb: { Keys: o.keys, NewImage: { ...o.keys, n: { N: String(id) } }, SequenceNumber: '1' },
    },
    {
      sequenceNumber: String(1_000_000 + position),
      tableName: o.table ?? 'orders',
      creationTime: o.ms,
      ...(o.partitionKey === undefined ? {} : { partitionKey: o.partitionKey }),
    },
  );
}

function order(raws: unknown[]) {
  const read = { records: raws.map((r) => parse(r)), errors: undefined };
  const out = orderKinesisBatch(raws, read);
  return { ids: out.records.map((r) => r?.eventID), duplicates: out.duplicates };
}

const sk = (n: string): AttributeMap => ({ pk: { S: 'order' }, sk: { N: n } });

describe('orderKinesisBatch: an item is its table and its keys by value', () => {
  it("orders one item's changes though its number key is spelled two ways and each has its own partition key", () => {
    const raws = [
      change(2, 0, { keys: sk('1.50'), ms: 1_800_000_000_002, partitionKey: 'p-a' }),
      change(9, 1, { keys: sk('7'), ms: 1_800_000_000_000, partitionKey: 'p-b' }),
      change(1, 2, { keys: sk('1.5'), ms: 1_800_000_000_001, partitionKey: 'p-c' }),
    ];
    expect(order(raws).ids).toEqual(['event-1', 'event-9', 'event-2']);
  });

  it('keeps apart two items that share a partition key, and one key in two tables', () => {
    const raws = [
      change(2, 0, { keys: sk('1'), ms: 1_800_000_000_002, partitionKey: 'same' }),
      change(1, 1, { keys: sk('2'), ms: 1_800_000_000_001, partitionKey: 'same' }),
      change(4, 2, { keys: sk('1'), ms: 1_800_000_000_004, table: 'returns', partitionKey: 'same' }),
      change(3, 3, { keys: sk('1'), ms: 1_800_000_000_000, partitionKey: 'same' }),
    ];
    // Item (orders, 1) holds positions 0 and 3; (orders, 2) and (returns, 1) are alone.
    expect(order(raws).ids).toEqual(['event-3', 'event-1', 'event-4', 'event-2']);
  });

  it('drops an exact duplicate that arrives under another partition key', () => {
    const first = change(1, 0, { keys: sk('1.5'), ms: 1_800_000_000_001, partitionKey: 'p-a' });
    const again = { ...first, kinesis: { ...first.kinesis, partitionKey: 'p-z', sequenceNumber: '1000009' } };
    const result = order([first, again]);
    expect(result).toEqual({ ids: ['event-1'], duplicates: 1 });
  });

  it('property: whatever partition keys the producer chose, each item gets its changes in creation order', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            item: fc.integer({ min: 0, max: 3 }),
            spelling: fc.constantFrom('', '.0', '.00', 'E0'),
            partitionKey: fc.string({ minLength: 1, maxLength: 3 }),
          }),
          { minLength: 1, maxLength: 25 },
        ),
        (changes) => {
          const raws = changes.map((c, i) =>
            change(i, i, {
              keys: sk(`${c.item + 1}${c.spelling}`),
              // Later positions carry earlier times, so every item of two or more changes must move.
              ms: 1_800_000_000_000 + (changes.length - i),
              partitionKey: c.partitionKey,
            }),
          );
          const ids = order(raws).ids;
          for (let item = 0; item < 4; item++) {
            const mine = ids
              .filter((id) => changes[Number(id!.slice(6))]!.item === item)
              .map((id) => Number(id!.slice(6)));
            expect(mine).toEqual([...mine].sort((a, b) => b - a));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
