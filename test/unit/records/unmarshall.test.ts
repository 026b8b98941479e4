import { describe, expect, it } from 'vitest';
import { InvalidAttributeValueError, marshall, NumberValue, unmarshall } from '../../../src/records/index.js';
import type { AttributeMap } from '../../../src/records/types.js';

import { thrown } from './fixtures.js';

describe('unmarshall', () => {
  it('maps every DynamoDB type', () => {
    const map: AttributeMap = {
      s: { S: '' },
      n: { N: '7' },
      b: { B: 'AAEC' },
      t: { BOOL: true },
      z: { NULL: true },
      ss: { SS: ['a', 'b'] },
      ns: { NS: ['1', '1.50'] },
      bs: { BS: ['AA==', 'AQ=='] },
      l: { L: [{ S: 'x' }, { L: [] }, { M: {} }] },
      m: { M: { inner: { N: '-1' } } },
    };
    const item = unmarshall(map);
    expect(item).toStrictEqual({
      s: '',
      n: 7,
      b: new Uint8Array([0, 1, 2]),
      t: true,
      z: null,
      ss: new Set(['a', 'b']),
      ns: new Set([1, new NumberValue('1.50')]),
      bs: new Set([new Uint8Array([0]), new Uint8Array([1])]),
      l: ['x', [], {}],
      m: { inner: -1 },
    });
    expect(marshall(item, { binary: 'base64' })).toStrictEqual(map);
  });

  it('decodes binaries into standalone Uint8Arrays (not views of a shared pool)', () => {
    const { b } = unmarshall<{ b: Uint8Array }>({ b: { B: 'AQID' } });
    expect(b.constructor).toBe(Uint8Array);
    expect(b.buffer.byteLength).toBe(3);
  });

  it('accepts the SDK shape, Uint8Array binaries, as they are', () => {
    const bytes = new Uint8Array([9, 8]);
    const item = unmarshall({
      b: { B: bytes as unknown as string },
      bs: { BS: [bytes as unknown as string] },
    });
    expect(item.b).toBe(bytes);
    expect(item.bs).toStrictEqual(new Set([bytes]));
  });

  it('keeps an attribute called __proto__ as data, never as the prototype', () => {
    const map = JSON.parse('{"__proto__":{"M":{"polluted":{"BOOL":true}}}}') as AttributeMap;
    const item = unmarshall(map);
    expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
    expect(Object.hasOwn(item, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(marshall(item, { binary: 'base64' })).toStrictEqual(map);
  });

  it.each([
    [{ a: {} }, 'no-type', 'a'],
    [{ a: { S: 'x', N: '1' } }, 'multiple-types', 'a'],
    [{ a: { X: 'x' } }, 'unknown-type', 'a'],
    [{ a: { M: { b: { L: [{ S: 'ok' }, {}] } } } }, 'no-type', 'a.b[1]'],
    [{ a: { NS: ['1', 'one'] } }, 'invalid-number', 'a[1]'],
    [{ a: { L: 'nope' } }, 'wrong-shape', 'a'],
    [{ a: null }, 'wrong-shape', 'a'],
    [{ a: { B: 5 } }, 'invalid-binary', 'a'],
    [{ a: { NULL: false } }, 'wrong-shape', 'a'],
  ])('%j → InvalidAttributeValueError %s at %s', (map, reason, path) => {
    const error = thrown(() => unmarshall(map as unknown as AttributeMap));
    expect(error).toBeInstanceOf(InvalidAttributeValueError);
    expect(error).toMatchObject({ name: 'InvalidAttributeValueError', reason, path });
    expect((error as Error).message).toContain(`(at ${path})`);
  });

  it.each(['A', 'AB=C', 'AB!C', 'ABC===', 'ABĀC'])('rejects the non-base64 binary %j', (b64) => {
    expect(thrown(() => unmarshall({ b: { B: b64 } }))).toMatchObject({
      reason: 'invalid-binary',
      path: 'b',
    });
  });

  it('decodes padded, unpadded and URL-safe base64', () => {
    expect(unmarshall({ a: { B: 'AQI=' }, b: { B: 'AQI' }, c: { B: '-_8' }, d: { B: '' } })).toStrictEqual({
      a: new Uint8Array([1, 2]),
      b: new Uint8Array([1, 2]),
      c: new Uint8Array([251, 255]),
      d: new Uint8Array([]),
    });
  });

  it('ignores type keys whose value is undefined (SDK objects may carry them)', () => {
    expect(unmarshall({ a: { S: 'x', N: undefined } })).toStrictEqual({ a: 'x' });
  });
});
