import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { incrementalLines } from '../../../../src/local/export/local-export.js';
import { canonicalNumberText } from '../../../../src/records/number-canonical.js';
import type { LambdaStreamRecord } from '../../../../src/records/types.js';
import { numberParts, spell, spellingChoices, valueKey } from '../../../support/number-spellings.js';

/** A MODIFY keyed as DynamoDB Local's record is: the key as the request spelt it, the images in stored form. */
function modify(sk: string, rev: number, at: number): LambdaStreamRecord {
  const stored = { pk: { S: 'order' }, sk: { N: canonicalNumberText(sk) } };
  return {
    eventID: `e${rev}`,
    eventName: 'MODIFY',
    dynamodb: {
      ApproximateCreationDateTime: at,
      Keys: { pk: { S: 'order' }, sk: { N: sk } },
      OldImage: { ...stored, rev: { N: String(rev - 1) } },
      NewImage: { ...stored, rev: { N: String(rev) } },
      SequenceNumber: String(rev),
    },
  } as LambdaStreamRecord;
}

describe('incrementalLines', () => {
  it("one line per item by key value: 1.5, 1.50, 15E-1 and 0.15e1 are one item, keyed as stored, with the last write's image", () => {
    const spellings = ['1.5', '1.50', '15E-1', '0.15e1'];
    const lines = incrementalLines(
      spellings.map((sk, i) => modify(sk, i + 2, 100)),
      0,
      1_000_000,
    ).map((l) => JSON.parse(l));
    expect(lines).toEqual([
      {
        Metadata: { WriteTimestampMicros: { N: '100000000' } },
        Keys: { pk: { S: 'order' }, sk: { N: '1.5' } },
        OldImage: { pk: { S: 'order' }, sk: { N: '1.5' }, rev: { N: '1' } },
        NewImage: { pk: { S: 'order' }, sk: { N: '1.5' }, rev: { N: '5' } },
      },
    ]);
  });

  it('as many lines as distinct key values, whatever the spellings (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(numberParts, spellingChoices), { minLength: 1, maxLength: 12 }),
        (writes) => {
          const records = writes.map(([value, choice], i) => modify(spell(value, choice), i + 1, 100));
          const lines = incrementalLines(records, 0, 1_000_000).map((l) => JSON.parse(l));
          expect(lines).toHaveLength(new Set(writes.map(([value]) => valueKey(value))).size);
          expect(new Set(lines.map((l) => l.Keys.sk.N))).toEqual(
            new Set(records.map((r) => canonicalNumberText(r.dynamodb.Keys.sk?.N as string))),
          );
        },
      ),
      { numRuns: 200 },
    );
  });
});
