import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BATCH_GET_LIMIT, planBatches } from '../../../src/votes/batch-plan.js';
import { readCount, voteCountText } from '../../../src/votes/count.js';
import { CorruptCounterError } from '../../../src/votes/errors.js';
import { fnv1a, PollKeys } from '../../../src/votes/keys.js';

describe('batch plan', () => {
  it('covers every slot once, in calls of at most 100 keys, with ceil(C·(S+1)/100) calls', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 600 }),
        fc.integer({ min: 1, max: 60 }),
        (contestants, shards) => {
          const plan = planBatches(contestants, shards);
          expect(plan.batches).toBe(Math.ceil((contestants * (shards + 1)) / 100));
          let next = 0;
          for (let b = 0; b < plan.batches; b++) {
            const [start, end] = plan.range(b);
            expect(start).toBe(next);
            expect(end - start).toBeGreaterThan(0);
            expect(end - start).toBeLessThanOrEqual(BATCH_GET_LIMIT);
            next = end;
          }
          expect(next).toBe(contestants * (shards + 1));
        },
      ),
    );
  });
});

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

describe('key layout', () => {
  it('never maps two different (contestant, shard) pairs to the same key, even with # in ids', () => {
    const keys = new PollKeys('poll', 4);
    const id = fc.string({ unit: fc.constantFrom('a', 'b', '#', '1', '2'), minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(id, fc.nat(30), id, fc.nat(30), (a, i, b, j) => {
        fc.pre(a !== b || i !== j);
        expect(keys.shard(a, i).pk.S).not.toBe(keys.shard(b, j).pk.S);
      }),
    );
  });

  it('puts a contestant in the same registry and totals bucket every time, within range', () => {
    const keys = new PollKeys('poll', 7);
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (contestant) => {
        const bucket = keys.bucketOf(contestant);
        expect(bucket).toBeGreaterThanOrEqual(0);
        expect(bucket).toBeLessThan(7);
        expect(keys.registry(contestant).pk.S).toBe(`POLL#poll#REGISTRY#${bucket}`);
        expect(keys.total(contestant).pk.S).toBe(`POLL#poll#TOTALS#${bucket}`);
        expect(keys.total(contestant).sk.S).toBe(`CONTESTANT#${contestant}`);
      }),
    );
    // Pinned: a deployed poll must keep its buckets across versions.
    expect(fnv1a('contestant-1')).toBe(fnv1a('contestant-1'));
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
  });

  it('spells the documented layout', () => {
    const keys = new PollKeys('final', 4);
    expect(keys.shard('alice', 3)).toEqual({ pk: { S: 'POLL#final#VOTE#alice#3' }, sk: { S: 'COUNT' } });
    expect(keys.marker('u-9')).toEqual({ pk: { S: 'POLL#final#VOTER#u-9' }, sk: { S: 'MARKER' } });
  });
});
