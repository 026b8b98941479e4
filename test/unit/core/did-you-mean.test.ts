import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { didYouMean, nearestNames } from '../../../src/core/did-you-mean.js';

describe('nearestNames', () => {
  it('suggests the nearest names by edits (a swap counts one), case ignored', () => {
    expect(nearestNames('ordres', ['orders', 'archive', 'votes'])).toEqual(['orders']);
    expect(nearestNames('Archve', ['orders', 'archive'])).toEqual(['archive']);
    expect(nearestNames('order', ['orders', 'ordersB', 'border'])).toEqual(['orders', 'border']);
    expect(didYouMean('handlr', ['handler', 'other'])).toBe(" Did you mean 'handler'?");
  });

  it('suggests nothing far off, nothing for an empty list, nothing for an oversized name', () => {
    expect(nearestNames('zzz', ['orders', 'archive'])).toEqual([]);
    expect(nearestNames('orders', [])).toEqual([]);
    expect(nearestNames('a'.repeat(10_000), ['a'.repeat(10_000)])).toEqual([]);
    expect(didYouMean('zzz', ['orders'])).toBe('');
  });

  it('any input: at most three suggestions, each a candidate, and a candidate one edit away is found', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 3, maxLength: 40 }),
        fc.array(fc.string({ maxLength: 60 }), { maxLength: 50 }),
        (name, others) => {
          const typo = `${name.slice(0, -1)}${name.at(-1) === 'x' ? 'y' : 'x'}`;
          const near = nearestNames(typo, [...others, name]);
          expect(near.length).toBeLessThanOrEqual(3);
          for (const n of near) expect([...others, name]).toContain(n);
          if (typo !== name && !others.some((o) => o.toLowerCase() === typo.toLowerCase()))
            expect(near.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
