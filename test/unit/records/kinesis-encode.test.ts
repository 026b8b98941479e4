import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { kinesisPartitionKey } from '../../../src/records/kinesis-encode.js';
import { numberParts, spell, spellingChoices, valueKey } from '../../support/number-spellings.js';

const keyed = (sk: string) => ({ pk: { S: 'order' }, sk: { N: sk } });

describe('kinesisPartitionKey', () => {
  it('one partition key per item by key value: 1.5, 1.50, 15E-1 and 0.15e1 alike, 2.5 apart', () => {
    const keys = ['1.5', '1.50', '15E-1', '0.15e1'].map((sk) => kinesisPartitionKey(keyed(sk)));
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9A-F]{32}$/);
    expect(kinesisPartitionKey(keyed('2.5'))).not.toBe(keys[0]);
    // Attribute order is no part of the item either.
    expect(kinesisPartitionKey({ sk: { N: '1.50' }, pk: { S: 'order' } })).toBe(keys[0]);
  });

  it('two spellings of one value give one partition key (fast-check)', () => {
    fc.assert(
      fc.property(numberParts, spellingChoices, numberParts, spellingChoices, (a, sa, b, sb) => {
        const same = valueKey(a) === valueKey(b);
        const ka = kinesisPartitionKey(keyed(spell(a, sa)));
        const kb = kinesisPartitionKey(keyed(spell(b, sb)));
        if (same) expect(ka).toBe(kb);
        expect(kinesisPartitionKey(keyed(spell(a, sb)))).toBe(ka);
      }),
      { numRuns: 300 },
    );
  });

  it('keys no table could hold still get one (their text hashed)', () => {
    expect(kinesisPartitionKey({ pk: { BOOL: true } } as never)).toMatch(/^[0-9A-F]{32}$/);
  });
});
