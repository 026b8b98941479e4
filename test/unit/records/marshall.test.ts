import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall as sdkMarshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { marshall, marshallValue, NumberValue, UnsupportedValueError } from '../../../src/records/index.js';

import { thrown } from './fixtures.js';

describe('marshall', () => {
  it('writes bigint and NumberValue exactly, Map as M, and binaries as base64 or bytes', () => {
    const bytes = new Uint8Array([255, 0]);
    expect(
      marshall(
        { big: 10n ** 30n, exact: new NumberValue('1.10'), map: new Map([['k', 1]]), b: bytes },
        { binary: 'base64' },
      ),
    ).toStrictEqual({
      big: { N: '1000000000000000000000000000000' },
      exact: { N: '1.10' },
      map: { M: { k: { N: '1' } } },
      b: { B: '/wA=' },
    });
    expect(marshall({ b: bytes, s: new Set([bytes]) }, { binary: 'bytes' })).toStrictEqual({
      b: { B: bytes },
      s: { BS: [bytes] },
    });
  });

  it("gives bytes by default, as @aws-sdk/util-dynamodb does: what a PutItemCommand's Item takes", () => {
    const item = { pk: 'a', b: new Uint8Array([1, 2]), s: new Set([new Uint8Array([3])]) };
    const ours = marshall(item);
    expect(ours).toStrictEqual(sdkMarshall(item));
    expect(ours.b).toStrictEqual({ B: new Uint8Array([1, 2]) });
    expect(ours.s).toStrictEqual({ BS: [new Uint8Array([3])] });
    const put = new PutItemCommand({ TableName: 't', Item: marshall(item) }); // compiles: the SDK's shape
    expect(put.input.Item?.b?.B).toBeInstanceOf(Uint8Array);
  });

  it.each([
    [{ s: new Set() }, /empty sets \(at s\)/],
    [{ l: [1, { n: Number.NaN }] }, /NaN has no DynamoDB representation \(at l\[1\]\.n\)/],
    [{ i: Number.POSITIVE_INFINITY }, /Infinity/],
    [{ m: new Set(['a', 1]) }, /must not mix .* \(at m\[1\]\)/],
    [{ d: new Date(0) }, /Date has no DynamoDB representation/],
    [{ f: () => 1 }, /function has no DynamoDB representation/],
    [{ u: undefined }, /removeUndefined/],
    [{ s: new Set([{}]) }, /only strings, numbers or Uint8Arrays/],
  ])('refuses %o with UnsupportedValueError', (item, message) => {
    const error = thrown(() => marshall(item as Record<string, unknown>));
    expect(error).toBeInstanceOf(UnsupportedValueError);
    expect((error as Error).name).toBe('UnsupportedValueError');
    expect((error as Error).message).toMatch(message);
  });

  it('drops undefined when asked', () => {
    expect(
      marshall({ a: undefined, l: [1, undefined], s: new Set(['x', undefined]) }, { removeUndefined: true }),
    ).toStrictEqual({
      l: { L: [{ N: '1' }] },
      s: { SS: ['x'] },
    });
  });

  it('marshallValue handles a single value; marshall wants a plain object', () => {
    expect(marshallValue(null)).toStrictEqual({ NULL: true });
    expect(marshallValue([true])).toStrictEqual({ L: [{ BOOL: true }] });
    expect(() => marshall([] as never)).toThrow(UnsupportedValueError);
  });

  it('validates options', () => {
    expect(() => marshall({}, { binary: 'hex' as never })).toThrow(InvalidOptionsError);
    expect(() => marshall({}, { removeUndefinedValues: true } as never)).toThrow(
      /unknown option 'removeUndefinedValues'/,
    );
  });
});
