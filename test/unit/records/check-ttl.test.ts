import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { checkTtl, NumberValue, unmarshall } from '../../../src/records/index.js';

const now = new Date('2026-11-22T08:00:00Z');
const nowSeconds = now.getTime() / 1000;
const day = 86_400;

describe('checkTtl', () => {
  it('a seconds TTL in the future expires', () => {
    expect(checkTtl({ ttl: nowSeconds + day }, 'ttl', { now })).toStrictEqual({
      expires: true,
      expiresAt: nowSeconds + day,
      due: false,
    });
  });

  it('a seconds TTL in the recent past is due (TTL deletes lag)', () => {
    expect(checkTtl({ ttl: nowSeconds - 3 * day }, 'ttl', { now })).toMatchObject({
      expires: true,
      due: true,
    });
  });

  it.each([
    ['missing', {}, 'missing'],
    ['null', { ttl: null }, 'missing'],
    ['a string', { ttl: String(nowSeconds + day) }, 'not-a-number'],
    ['a boolean', { ttl: true }, 'not-a-number'],
    ['a set', { ttl: new Set([1]) }, 'not-a-number'],
    ['milliseconds', { ttl: now.getTime() + day * 1000 }, 'milliseconds'],
    ['microseconds', { ttl: now.getTime() * 1000 }, 'microseconds'],
    ['nanoseconds', { ttl: BigInt(now.getTime()) * 1_000_000n }, 'nanoseconds'],
    ['beyond year 2500 even as nanoseconds', { ttl: new NumberValue('1E+40') }, 'too-far-in-future'],
    ['six years in the past', { ttl: nowSeconds - 6 * 365 * day }, 'more-than-5-years-past'],
    ['zero', { ttl: 0 }, 'more-than-5-years-past'],
    ['negative', { ttl: -1 }, 'more-than-5-years-past'],
  ])('%s never expires', (_, image, reason) => {
    const result = checkTtl(image, 'ttl', { now });
    expect(result).toMatchObject({ expires: false, reason });
    if (!result.expires) expect(result.message).toContain('"ttl"');
  });

  it('says when a string TTL looks numeric', () => {
    const result = checkTtl({ ttl: '1795330000' }, 'ttl', { now });
    expect(result).toMatchObject({ expires: false, reason: 'not-a-number' });
    if (!result.expires) expect(result.message).toMatch(/looks numeric/);
  });

  it('reads raw attribute maps as well as items', () => {
    const raw = {
      ttl: { N: String(nowSeconds + day) },
      s: { S: '1795330000' },
      ms: { N: String(now.getTime()) },
    };
    expect(checkTtl(raw, 'ttl', { now })).toMatchObject({ expires: true });
    expect(checkTtl(raw, 's', { now })).toMatchObject({ expires: false, reason: 'not-a-number' });
    expect(checkTtl(raw, 'ms', { now })).toMatchObject({ expires: false, reason: 'milliseconds' });
    expect(checkTtl(unmarshall(raw), 'ms', { now })).toMatchObject({
      expires: false,
      reason: 'milliseconds',
    });
    expect(checkTtl(undefined, 'ttl', { now })).toMatchObject({ expires: false, reason: 'missing' });
  });

  it('accepts now as epoch milliseconds and defaults to the clock', () => {
    expect(checkTtl({ ttl: nowSeconds + 10 }, 'ttl', { now: now.getTime() })).toMatchObject({ due: false });
    expect(checkTtl({ ttl: Date.now() / 1000 + 3600 }, 'ttl')).toMatchObject({ expires: true, due: false });
  });

  it('validates its arguments', () => {
    expect(() => checkTtl({}, '')).toThrow(InvalidOptionsError);
    expect(() => checkTtl({}, 'ttl', { at: now } as never)).toThrow(/unknown option 'at'/);
    expect(() => checkTtl({}, 'ttl', { now: 'today' as never })).toThrow(InvalidOptionsError);
  });
});
