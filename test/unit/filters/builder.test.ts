import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import {
  anyOfPatterns,
  compileFilterCriteria,
  compilePattern,
  eventNames,
  FilterCriteriaError,
  fieldPattern,
  filterPattern,
  InvalidPatternError,
  inserts,
  keyAttribute,
  MAX_PATTERN_LENGTH,
  modifies,
  newImageAttribute,
  oldImageAttribute,
  toFilterCriteria,
  toServerlessFilterPatterns,
  ttlDeletes,
  userDeletes,
  userIdentityPattern,
} from '../../../src/filters/index.js';

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('attribute helpers', () => {
  it('always include the type key in the path', () => {
    expect(keyAttribute('pk').S.equals('a', 'b')).toEqual({ dynamodb: { Keys: { pk: { S: ['a', 'b'] } } } });
    expect(newImageAttribute('price').N.equals(42, '42.5')).toEqual({
      dynamodb: { NewImage: { price: { N: ['42', '42.5'] } } },
    });
    expect(oldImageAttribute('active').BOOL.equals(true)).toEqual({
      dynamodb: { OldImage: { active: { BOOL: [true] } } },
    });
    expect(newImageAttribute('tags').SS.contains('red')).toEqual({
      dynamodb: { NewImage: { tags: { SS: ['red'] } } },
    });
    expect(newImageAttribute('blob').B.equals('AAE=')).toEqual({
      dynamodb: { NewImage: { blob: { B: ['AAE='] } } },
    });
  });

  it('put exists under the type key', () => {
    expect(newImageAttribute('email').S.notExists()).toEqual({
      dynamodb: { NewImage: { email: { S: [{ exists: false }] } } },
    });
    expect(oldImageAttribute('deletedAt').N.exists()).toEqual({
      dynamodb: { OldImage: { deletedAt: { N: [{ exists: true }] } } },
    });
    expect(newImageAttribute('gone').NULL.exists()).toEqual({
      dynamodb: { NewImage: { gone: { NULL: [{ exists: true }] } } },
    });
  });

  it('string operators', () => {
    const s = newImageAttribute('sk').S;
    expect(s.prefix('ORDER#')).toEqual({ dynamodb: { NewImage: { sk: { S: [{ prefix: 'ORDER#' }] } } } });
    expect(s.prefix('order#', { ignoreCase: true })).toEqual({
      dynamodb: { NewImage: { sk: { S: [{ prefix: { 'equals-ignore-case': 'order#' } }] } } },
    });
    expect(s.suffix('.png', { ignoreCase: true })).toEqual({
      dynamodb: { NewImage: { sk: { S: [{ suffix: { 'equals-ignore-case': '.png' } }] } } },
    });
    expect(s.equalsIgnoreCase('X')).toEqual({
      dynamodb: { NewImage: { sk: { S: [{ 'equals-ignore-case': 'X' }] } } },
    });
    expect(s.anythingBut('a', 'b')).toEqual({
      dynamodb: { NewImage: { sk: { S: [{ 'anything-but': ['a', 'b'] }] } } },
    });
    expect(s.anyOf('a', { prefix: 'b' })).toEqual({
      dynamodb: { NewImage: { sk: { S: ['a', { prefix: 'b' }] } } },
    });
  });

  it('nested map members and list elements', () => {
    expect(newImageAttribute('address').M.attribute('city').S.equals('Paris')).toEqual({
      dynamodb: { NewImage: { address: { M: { city: { S: ['Paris'] } } } } },
    });
    const p = newImageAttribute('items').L.element().S.equals('a');
    expect(p).toEqual({ dynamodb: { NewImage: { items: { L: { S: ['a'] } } } } });
    expect(compilePattern(p)({ dynamodb: { NewImage: { items: { L: [{ N: '1' }, { S: 'a' }] } } } })).toBe(
      true,
    );
  });

  it('refuses numeric on an N attribute and says why', () => {
    const error = thrown(() => newImageAttribute('price').N.numeric('>', 10));
    expect(error).toBeInstanceOf(InvalidPatternError);
    expect((error as InvalidPatternError).reason).toBe('not-supported-by-dynamodb');
    expect((error as InvalidPatternError).path).toBe('$.dynamodb.NewImage.price.N');
    expect(error.message).toMatch(/JSON string/);
    expect(error.message).toMatch(/only to JSON numbers/);
  });

  it('refuses conditions that can never match a string-typed value, wherever they come in', () => {
    const refusals: [() => unknown, string, RegExp][] = [
      [
        () => newImageAttribute('price').N.anyOf({ numeric: ['>', 0] }),
        '$.dynamodb.NewImage.price.N[0]',
        /only to JSON numbers/,
      ],
      [
        () => newImageAttribute('price').N.anyOf('1', 42),
        '$.dynamodb.NewImage.price.N[1]',
        /Give the value as text/,
      ],
      [() => keyAttribute('pk').S.anyOf(true), '$.dynamodb.Keys.pk.S[0]', /JSON string/],
      [() => newImageAttribute('s').S.anyOf(null), '$.dynamodb.NewImage.s.S[0]', /JSON string/],
      [
        () => newImageAttribute('tags').NS.anyOf({ numeric: ['=', 1] }),
        '$.dynamodb.NewImage.tags.NS[0]',
        /numeric/,
      ],
      [
        () => oldImageAttribute('price').N.anyOf({ 'anything-but': [5] }),
        '$.dynamodb.OldImage.price.N[0]',
        /excludes nothing/,
      ],
      [
        () => fieldPattern(['dynamodb', 'NewImage', 'price', 'N'], [{ numeric: ['>', 0] }]),
        '$.dynamodb.NewImage.price.N[0]',
        /only to JSON numbers/,
      ],
      [
        () => fieldPattern(['dynamodb', 'Keys', 'pk', 'S'], [{ 'anything-but': 3 }]),
        '$.dynamodb.Keys.pk.S[0]',
        /excludes nothing/,
      ],
    ];
    for (const [fn, path, message] of refusals) {
      const error = thrown(fn) as InvalidPatternError;
      expect(error).toBeInstanceOf(InvalidPatternError);
      expect({ path: error.path, reason: error.reason }).toEqual({
        path,
        reason: 'not-supported-by-dynamodb',
      });
      expect(error.message).toMatch(message);
    }
  });

  it('still accepts text conditions on string types and JSON values where the record has them', () => {
    expect(newImageAttribute('price').N.anyOf('42', { prefix: '4' }, { 'anything-but': ['0'] })).toEqual({
      dynamodb: { NewImage: { price: { N: ['42', { prefix: '4' }, { 'anything-but': ['0'] }] } } },
    });
    expect(fieldPattern(['dynamodb', 'NewImage', 'flag', 'BOOL'], [true])).toEqual({
      dynamodb: { NewImage: { flag: { BOOL: [true] } } },
    });
    expect(fieldPattern(['dynamodb', 'SizeBytes'], [{ numeric: ['<', 400_000] }, 7])).toEqual({
      dynamodb: { SizeBytes: [{ numeric: ['<', 400_000] }, 7] },
    });
  });

  it('refuses exists on a map or list (not a leaf) and says why', () => {
    for (const fn of [
      () => newImageAttribute('address').M.exists(),
      () => newImageAttribute('address').M.notExists(),
      () => newImageAttribute('items').L.notExists(),
    ]) {
      const error = thrown(fn) as InvalidPatternError;
      expect(error).toBeInstanceOf(InvalidPatternError);
      expect(error.reason).toBe('not-supported-by-dynamodb');
      expect(error.message).toMatch(/leaves/);
    }
  });

  it('refuses bad values', () => {
    expect(() => newImageAttribute('x').N.equals(1.5)).toThrow(InvalidPatternError);
    expect(() => newImageAttribute('x').S.equals()).toThrow(InvalidPatternError);
    expect(() => newImageAttribute('x').S.equals(1 as never)).toThrow(InvalidPatternError);
    expect(() => newImageAttribute('x').BOOL.equals('true' as never)).toThrow(InvalidPatternError);
    expect(() => newImageAttribute('')).toThrow(InvalidPatternError);
    expect(() => newImageAttribute('x').S.prefix('a', { ignorecase: true } as never)).toThrow(
      /unknown option/,
    );
    expect(() => newImageAttribute('x').S.anyOf({ numeric: ['>', 'x'] } as never)).toThrow(
      InvalidPatternError,
    );
  });
});

describe('filterPattern / eventNames / userIdentityPattern / anyOfPatterns / fieldPattern', () => {
  it('merges fragments (AND) and the result evaluates as the conjunction', () => {
    const p = filterPattern(
      eventNames('INSERT', 'MODIFY'),
      keyAttribute('pk').S.prefix('USER#'),
      newImageAttribute('status').S.equals('active'),
      newImageAttribute('email').S.exists(),
    );
    expect(p).toEqual({
      eventName: ['INSERT', 'MODIFY'],
      dynamodb: {
        Keys: { pk: { S: [{ prefix: 'USER#' }] } },
        NewImage: { status: { S: ['active'] }, email: { S: [{ exists: true }] } },
      },
    });
    const m = compilePattern(p);
    const base = {
      eventName: 'INSERT',
      dynamodb: { Keys: { pk: { S: 'USER#1' } }, NewImage: { status: { S: 'active' }, email: { S: 'a@b' } } },
    };
    expect(m(base)).toBe(true);
    expect(m({ ...base, eventName: 'REMOVE' })).toBe(false);
    expect(m({ ...base, dynamodb: { ...base.dynamodb, NewImage: { status: { S: 'active' } } } })).toBe(false);
  });

  it('refuses two conditions on the same path', () => {
    const error = thrown(() =>
      filterPattern(newImageAttribute('s').S.equals('a'), newImageAttribute('s').S.prefix('b')),
    ) as InvalidPatternError;
    expect(error.reason).toBe('conflicting-conditions');
    expect(error.path).toBe('$.dynamodb.NewImage.s.S');
  });

  it('validates its inputs', () => {
    expect(() => filterPattern()).toThrow(InvalidPatternError);
    expect(() => eventNames()).toThrow(InvalidPatternError);
    expect(() => eventNames('DELETE' as never)).toThrow(/not a stream eventName/);
    expect(() => userIdentityPattern({})).toThrow(InvalidPatternError);
    expect(() => userIdentityPattern({ principalID: 'x' } as never)).toThrow(/unknown userIdentity field/);
    expect(() => anyOfPatterns(inserts())).toThrow(InvalidPatternError);
    expect(() => fieldPattern([], ['x'])).toThrow(InvalidPatternError);
    expect(() => fieldPattern(['dynamodb', 'SizeBytes'], [{ numeric: ['>', 'big'] } as never])).toThrow(
      InvalidPatternError,
    );
  });

  it('userIdentityPattern and fieldPattern build the documented shapes', () => {
    expect(userIdentityPattern({ type: 'Service', principalId: 'dynamodb.amazonaws.com' })).toEqual({
      userIdentity: { type: ['Service'], principalId: ['dynamodb.amazonaws.com'] },
    });
    expect(fieldPattern(['dynamodb', 'SizeBytes'], [{ numeric: ['>', 1000] }])).toEqual({
      dynamodb: { SizeBytes: [{ numeric: ['>', 1000] }] },
    });
  });

  it('refuses a $or branch naming a path a sibling fragment also names (event-ruler keeps only the last)', () => {
    // Read as INSERT AND (MODIFY OR pk prefix) — but event-ruler would deliver every MODIFY.
    const error = thrown(() =>
      filterPattern(eventNames('INSERT'), anyOfPatterns(modifies(), keyAttribute('pk').S.prefix('A'))),
    ) as InvalidPatternError;
    expect(error).toBeInstanceOf(InvalidPatternError);
    expect(error.reason).toBe('conflicting-conditions');
    expect(error.path).toBe('$.eventName');
    expect(error.message).toMatch(/written last/);
  });

  it('$or fragments merge with other fragments (AND) when their paths differ', () => {
    const p = filterPattern(
      keyAttribute('pk').S.prefix('ORDER#'),
      anyOfPatterns(inserts(), newImageAttribute('status').S.equals('shipped')),
    );
    const m = compilePattern(p);
    const record = (eventName: string, pk: string, status: string) => ({
      eventName,
      dynamodb: { Keys: { pk: { S: pk } }, NewImage: { status: { S: status } } },
    });
    expect(m(record('INSERT', 'ORDER#1', 'new'))).toBe(true);
    expect(m(record('MODIFY', 'ORDER#1', 'shipped'))).toBe(true);
    expect(m(record('MODIFY', 'ORDER#1', 'new'))).toBe(false);
    expect(m(record('INSERT', 'USER#1', 'shipped'))).toBe(false);
  });

  it('anyOfPatterns builds $or', () => {
    const p = anyOfPatterns(inserts(), modifies());
    expect(p).toEqual({ $or: [{ eventName: ['INSERT'] }, { eventName: ['MODIFY'] }] });
    expect(compilePattern(p)({ eventName: 'MODIFY' })).toBe(true);
    expect(compilePattern(p)({ eventName: 'REMOVE' })).toBe(false);
  });
});

describe('export forms and Lambda limits', () => {
  it('toFilterCriteria gives CloudFormation FilterCriteria with JSON-string patterns', () => {
    const criteria = toFilterCriteria([ttlDeletes(), inserts()]);
    expect(criteria).toEqual({
      Filters: [{ Pattern: JSON.stringify(ttlDeletes()) }, { Pattern: '{"eventName":["INSERT"]}' }],
    });
    expect(toFilterCriteria(inserts())).toEqual({ Filters: [{ Pattern: '{"eventName":["INSERT"]}' }] });
  });

  it('toServerlessFilterPatterns gives plain objects (copies)', () => {
    const source = userDeletes();
    const out = toServerlessFilterPatterns([source]);
    expect(out).toEqual([source]);
    expect(out[0]).not.toBe(source);
  });

  it('allows 5 filters by default, up to 10 when configured, never more', () => {
    const six = Array.from({ length: 6 }, (_, i) => keyAttribute('pk').S.equals(`k${i}`));
    const error = thrown(() => toFilterCriteria(six)) as FilterCriteriaError;
    expect(error).toBeInstanceOf(FilterCriteriaError);
    expect(error.reason).toBe('too-many-filters');
    expect(error.message).toMatch(/raised to 10/);
    expect(toFilterCriteria(six, { maxFilters: 10 }).Filters).toHaveLength(6);
    expect(toServerlessFilterPatterns(six, { maxFilters: 6 })).toHaveLength(6);
    const eleven = Array.from({ length: 11 }, (_, i) => keyAttribute('pk').S.equals(`k${i}`));
    expect(() => toFilterCriteria(eleven, { maxFilters: 10 })).toThrow(FilterCriteriaError);
    expect(() => toFilterCriteria(six, { maxFilters: 11 })).toThrow(InvalidOptionsError);
    expect(() => toFilterCriteria(six, { maxFilter: 10 } as never)).toThrow(/unknown option 'maxFilter'/);
    expect(() => toFilterCriteria([])).toThrow(FilterCriteriaError);
  });

  it(`refuses a pattern longer than ${MAX_PATTERN_LENGTH} characters, naming which one`, () => {
    const values = Array.from({ length: 400 }, (_, i) => `customer-${i}`);
    const long = keyAttribute('pk').S.equals(...values);
    expect(JSON.stringify(long).length).toBeGreaterThan(MAX_PATTERN_LENGTH);
    const error = thrown(() => toFilterCriteria([inserts(), long])) as FilterCriteriaError;
    expect(error.reason).toBe('pattern-too-long');
    expect(error.index).toBe(1);
    const fits = keyAttribute('pk').S.equals(...values.slice(0, 50));
    expect(toFilterCriteria([fits]).Filters[0]?.Pattern.length).toBeLessThanOrEqual(MAX_PATTERN_LENGTH);
  });

  it('refuses an invalid pattern with its path', () => {
    expect(() => toFilterCriteria([{ eventName: 'INSERT' } as never])).toThrow(/\$\.eventName/);
  });
});

describe('compileFilterCriteria', () => {
  it('matches when any filter matches, from FilterCriteria or patterns', () => {
    const fromCriteria = compileFilterCriteria(toFilterCriteria([ttlDeletes(), inserts()]));
    const fromPatterns = compileFilterCriteria([ttlDeletes(), JSON.stringify(inserts())]);
    for (const m of [fromCriteria, fromPatterns]) {
      expect(m({ eventName: 'INSERT' })).toBe(true);
      expect(
        m({ eventName: 'REMOVE', userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' } }),
      ).toBe(true);
      expect(m({ eventName: 'REMOVE' })).toBe(false);
    }
  });

  it('no filters means no filtering', () => {
    expect(compileFilterCriteria({ Filters: [] })({ eventName: 'REMOVE' })).toBe(true);
  });

  it('names the bad filter', () => {
    expect(() =>
      compileFilterCriteria({ Filters: [{ Pattern: '{"a":["x"]}' }, { Pattern: '{"a":"x"}' }] }),
    ).toThrow(/filter 1/);
    expect(() => compileFilterCriteria({} as never)).toThrow(FilterCriteriaError);
    expect(() => compileFilterCriteria(null as never)).toThrow(FilterCriteriaError);
  });
});
