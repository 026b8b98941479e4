import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fnv1a, PollKeys } from '../../../src/votes/keys.js';

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
