import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readCount, voteCountText } from '../../../src/votes/count.js';
import { CorruptCounterError } from '../../../src/votes/errors.js';

describe('counts', () => {
  it('reads any whole number of up to 38 digits exactly, never through Number', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 38n - 1n }), (n) => {
        expect(readCount({ N: n.toString() }, 'pk', 'sk')).toBe(n);
      }),
    );
  });

  it('treats an absent counter as 0 and names the item of a corrupt one', () => {
    expect(readCount(undefined, 'pk', 'sk')).toBe(0n);
    for (const bad of [{ N: '1.5' }, { N: '-2' }, { N: '1E+3' }, { S: '7' }]) {
      expect(() => readCount(bad, 'POLL#p#VOTE#a#0', 'COUNT')).toThrow(CorruptCounterError);
    }
    expect(() => readCount({ N: '0.5' }, 'POLL#p#VOTE#a#0', 'COUNT')).toThrow(/POLL#p#VOTE#a#0/);
  });

  it('writes a vote weight as exact number text', () => {
    expect(voteCountText(1)).toBe('1');
    expect(voteCountText(2n ** 64n)).toBe('18446744073709551616');
    expect(voteCountText(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
  });
});
