import { describe, expect, it } from 'vitest';
import type { FilterPattern } from '../../../src/filters/index.js';
import { compilePattern, matchesPattern } from '../../../src/filters/index.js';

/** Table helper: each case is [event, expected]. */
function check(pattern: FilterPattern | string, cases: readonly [unknown, boolean][]): void {
  const matcher = compilePattern(pattern);
  for (const [event, expected] of cases) {
    expect({ event, result: matcher(event) }).toEqual({ event, result: expected });
  }
}

describe('exact values', () => {
  it('strings, empty string, and any-of lists', () => {
    check({ a: ['x', ''] }, [
      [{ a: 'x' }, true],
      [{ a: '' }, true],
      [{ a: 'y' }, false],
      [{ a: 'X' }, false],
      [{}, false],
    ]);
  });

  it('does not cross JSON types: "300" is not 300, "true" is not true, "null" is not null', () => {
    check({ a: ['300'] }, [
      [{ a: '300' }, true],
      [{ a: 300 }, false],
    ]);
    check({ a: [300] }, [
      [{ a: 300 }, true],
      [{ a: '300' }, false],
    ]);
    check({ a: [true] }, [
      [{ a: true }, true],
      [{ a: 'true' }, false],
      [{ a: false }, false],
    ]);
    check({ a: [false] }, [
      [{ a: false }, true],
      [{ a: true }, false],
    ]);
  });

  it('numbers compare by value: 3.0e2 equals 300', () => {
    check({ a: [300] }, [
      [JSON.parse('{"a": 3.0e2}'), true],
      [JSON.parse('{"a": 300.0}'), true],
      [{ a: 300.5 }, false],
    ]);
    check('{"a": [3.0e2]}', [
      [{ a: 300 }, true],
      [{ a: 301 }, false],
    ]);
  });

  it('null matches a null value but not a missing field, and "" is not null', () => {
    check({ a: [null] }, [
      [{ a: null }, true],
      [{}, false],
      [{ a: '' }, false],
      [{ a: 'null' }, false],
    ]);
    check({ a: [''] }, [
      [{ a: '' }, true],
      [{ a: null }, false],
      [{}, false],
    ]);
  });

  it('exactly matches a string literally', () => {
    check({ a: [{ exactly: 'x' }] }, [
      [{ a: 'x' }, true],
      [{ a: 'xx' }, false],
    ]);
  });
});

describe('fields AND, nested objects', () => {
  it('requires every field', () => {
    check({ a: ['1'], b: { c: ['2'] } }, [
      [{ a: '1', b: { c: '2' } }, true],
      [{ a: '1', b: { c: '3' } }, false],
      [{ a: '1' }, false],
      [{ b: { c: '2' } }, false],
      [{ a: '1', b: '2' }, false],
    ]);
  });

  it('ignores fields the pattern does not name', () => {
    check({ a: ['1'] }, [[{ a: '1', z: { deep: [1, 2] } }, true]]);
  });

  it('an object at the path is not a value', () => {
    check({ a: ['x'] }, [[{ a: { x: 'x' } }, false]]);
  });

  it('does not read inherited properties', () => {
    check({ constructor: [{ exists: true }] }, [
      [{}, false],
      [JSON.parse('{"constructor": "x"}'), true],
    ]);
  });
});

describe('prefix / suffix / equals-ignore-case', () => {
  it('prefix on strings only', () => {
    check({ a: [{ prefix: 'ab' }] }, [
      [{ a: 'abc' }, true],
      [{ a: 'ab' }, true],
      [{ a: 'Abc' }, false],
      [{ a: 'xab' }, false],
      [{ a: 123 }, false],
      [{}, false],
    ]);
    check({ a: [{ prefix: '12' }] }, [[{ a: 123 }, false]]);
  });

  it('an empty prefix matches every string', () => {
    check({ a: [{ prefix: '' }] }, [
      [{ a: '' }, true],
      [{ a: 'x' }, true],
      [{ a: 1 }, false],
    ]);
  });

  it('suffix', () => {
    check({ a: [{ suffix: '.png' }] }, [
      [{ a: 'x.png' }, true],
      [{ a: 'x.PNG' }, false],
      [{ a: 'png' }, false],
    ]);
  });

  it('equals-ignore-case', () => {
    check({ a: [{ 'equals-ignore-case': 'AlIcE' }] }, [
      [{ a: 'alice' }, true],
      [{ a: 'ALICE' }, true],
      [{ a: 'alicex' }, false],
      [{ a: null }, false],
    ]);
  });

  it('prefix and suffix with equals-ignore-case', () => {
    check({ a: [{ prefix: { 'equals-ignore-case': 'ORD#' } }] }, [
      [{ a: 'ord#1' }, true],
      [{ a: 'Ord#' }, true],
      [{ a: 'or' }, false],
      [{ a: 'x-ord#' }, false],
    ]);
    check({ a: [{ suffix: { 'equals-ignore-case': '.JPG' } }] }, [
      [{ a: 'a.jpg' }, true],
      [{ a: 'a.Jpg' }, true],
      [{ a: 'a.jpeg' }, false],
    ]);
  });
});

describe('anything-but', () => {
  it('single string and string list', () => {
    check({ a: [{ 'anything-but': 'x' }] }, [
      [{ a: 'y' }, true],
      [{ a: 'x' }, false],
      [{}, false],
    ]);
    check({ a: [{ 'anything-but': ['x', 'y'] }] }, [
      [{ a: 'z' }, true],
      [{ a: 'y' }, false],
    ]);
  });

  it('matches values of other types (event-ruler only excludes same-type values) but never a missing field', () => {
    check({ a: [{ 'anything-but': ['300'] }] }, [
      [{ a: 300 }, true],
      [{ a: null }, true],
      [{ a: true }, true],
      [{}, false],
      [{ a: { b: 'x' } }, false],
    ]);
  });

  it('numbers, by value', () => {
    check({ a: [{ 'anything-but': [100, 3.0e2] }] }, [
      [{ a: 200 }, true],
      [{ a: 300 }, false],
      [JSON.parse('{"a": 1.0e2}'), false],
      [{ a: '300' }, true],
    ]);
    check({ a: [{ 'anything-but': 5 }] }, [
      [{ a: 5 }, false],
      [{ a: 6 }, true],
    ]);
  });

  it('prefix and suffix', () => {
    check({ a: [{ 'anything-but': { prefix: 'init' } }] }, [
      [{ a: 'running' }, true],
      [{ a: 'initializing' }, false],
      [{ a: 1 }, true],
    ]);
    check({ a: [{ 'anything-but': { suffix: ['.tmp', '.bak'] } }] }, [
      [{ a: 'x.txt' }, true],
      [{ a: 'x.bak' }, false],
    ]);
  });

  it('equals-ignore-case and wildcard', () => {
    check({ a: [{ 'anything-but': { 'equals-ignore-case': ['Stopped', 'FAILED'] } }] }, [
      [{ a: 'running' }, true],
      [{ a: 'STOPPED' }, false],
      [{ a: 'failed' }, false],
    ]);
    check({ a: [{ 'anything-but': { wildcard: 'tmp/*' } }] }, [
      [{ a: 'data/x' }, true],
      [{ a: 'tmp/x' }, false],
    ]);
  });

  it('on an event array, matches when any element is not excluded (element-wise)', () => {
    check({ a: [{ 'anything-but': ['x'] }] }, [
      [{ a: ['x', 'y'] }, true],
      [{ a: ['x', 'x'] }, false],
      [{ a: [] }, false],
    ]);
  });
});

describe('numeric', () => {
  it('ranges with open and closed ends', () => {
    check({ a: [{ numeric: ['>', 0, '<=', 5] }] }, [
      [{ a: 0 }, false],
      [{ a: 0.000001 }, true],
      [{ a: 5 }, true],
      [{ a: 5.000001 }, false],
      [{ a: -1 }, false],
    ]);
    check({ a: [{ numeric: ['>=', 10, '<', 20] }] }, [
      [{ a: 10 }, true],
      [{ a: 20 }, false],
      [{ a: 19.999999 }, true],
    ]);
    check({ a: [{ numeric: ['<', 10] }] }, [
      [{ a: 9 }, true],
      [{ a: 10 }, false],
      [{ a: -4e9 }, true],
    ]);
    check({ a: [{ numeric: ['>=', 1.5] }] }, [
      [{ a: 1.5 }, true],
      [{ a: 1.49 }, false],
    ]);
  });

  it('= compares by value: 3.0e2 equals 300', () => {
    check({ a: [{ numeric: ['=', 300] }] }, [
      [JSON.parse('{"a": 3.0e2}'), true],
      [{ a: 300.000001 }, false],
    ]);
    check('{"a":[{"numeric":["=",3.0e2]}]}', [[{ a: 300 }, true]]);
  });

  it('only matches JSON numbers: a DynamoDB N string never matches', () => {
    check({ dynamodb: { NewImage: { price: { N: [{ numeric: ['>', 0] }] } } } }, [
      [{ dynamodb: { NewImage: { price: { N: '42' } } } }, false],
    ]);
    check({ a: [{ numeric: ['>', 0] }] }, [
      [{ a: '42' }, false],
      [{ a: true }, false],
      [{ a: null }, false],
    ]);
  });

  it('event values event-ruler cannot represent (beyond ±5e9, more than 6 decimals) never match', () => {
    check({ a: [{ numeric: ['>', 0] }] }, [
      [{ a: 6e9 }, false],
      [{ a: 0.0000001 }, false],
      [{ a: 4.5e9 }, true],
    ]);
  });

  it('six-decimal values above 2^32 are exact too (n × 10^6 rounds there, the micro-units must not)', () => {
    check({ a: [{ numeric: ['=', 4490151031.67757] }] }, [
      [{ a: 4490151031.67757 }, true],
      [{ a: 4490151031.677571 }, false],
    ]);
    check({ a: [{ numeric: ['>', -4423711616.586633, '<=', 4445243834.74116] }] }, [
      [{ a: -4423711616.586633 }, false],
      [{ a: -4423711616.586632 }, true],
      [{ a: 4445243834.74116 }, true],
      [{ a: 4445243834.741161 }, false],
    ]);
    check({ a: [{ 'anything-but': [4462870850.75518] }] }, [
      [{ a: 4462870850.75518 }, false],
      [{ a: 4462870850.755181 }, true],
    ]);
  });

  it('matches element-wise in arrays', () => {
    check({ a: [{ numeric: ['>', 10] }] }, [
      [{ a: [1, 2, 30] }, true],
      [{ a: [1, 2, 3] }, false],
    ]);
  });
});

describe('exists', () => {
  it('exists: true needs a leaf; null is a leaf', () => {
    check({ a: [{ exists: true }] }, [
      [{ a: 'x' }, true],
      [{ a: '' }, true],
      [{ a: 0 }, true],
      [{ a: null }, true],
      [{ a: ['x'] }, true],
      [{}, false],
      [{ a: {} }, false],
      [{ a: { b: 1 } }, false],
      [{ a: [] }, false],
    ]);
  });

  it('exists: false holds only when no leaf is at the path', () => {
    check({ a: [{ exists: false }] }, [
      [{}, true],
      [{ a: [] }, true],
      [{ a: null }, false],
      [{ a: 'x' }, false],
      [{ a: ['x'] }, false],
    ]);
  });

  it('exists: false on an intermediate node matches even though it is present (leaf semantics)', () => {
    check({ detail: { 'c-count': [{ exists: false }] } }, [
      [{ detail: { 'c-count': { c1: 100 } } }, true],
      [{ detail: { 'c-count': 5 } }, false],
    ]);
    // The DynamoDB consequence: exists:false on a map attribute without the type key.
    check({ dynamodb: { NewImage: { address: [{ exists: false }] } } }, [
      [{ dynamodb: { NewImage: { address: { M: { city: { S: 'Paris' } } } } } }, true],
    ]);
    // With the type key, exists tests the leaf.
    check({ dynamodb: { NewImage: { name: { S: [{ exists: false }] } } } }, [
      [{ dynamodb: { NewImage: { name: { S: 'x' } } } }, false],
      [{ dynamodb: { NewImage: { name: { N: '1' } } } }, true],
      [{ dynamodb: { NewImage: {} } }, true],
      [{ dynamodb: {} }, true],
    ]);
  });

  it('nested exists: false holds when a parent is missing or not an object', () => {
    check({ a: { b: { c: [{ exists: false }] } } }, [
      [{}, true],
      [{ a: 'scalar' }, true],
      [{ a: { b: {} } }, true],
      [{ a: { b: { c: 1 } } }, false],
    ]);
  });

  it('mixed with values in one list: value OR absent', () => {
    check({ a: ['x', { exists: false }] }, [
      [{}, true],
      [{ a: 'x' }, true],
      [{ a: 'y' }, false],
    ]);
  });

  it('exists: false under an array holds only if no element has the leaf', () => {
    check({ items: { sku: [{ exists: false }] } }, [
      [{ items: [{ qty: 1 }, { qty: 2 }] }, true],
      [{ items: [{ qty: 1 }, { sku: 'a' }] }, false],
      [{ items: [] }, true],
    ]);
  });
});

describe('wildcard', () => {
  it('* matches any run, including none', () => {
    check({ a: [{ wildcard: 'arn:*:table/*' }] }, [
      [{ a: 'arn:aws:table/x' }, true],
      [{ a: 'arn::table/' }, true],
      [{ a: 'arn:aws:index/x' }, false],
      [{ a: 5 }, false],
    ]);
  });

  it('escapes: \\* is a literal star, \\\\ a backslash; regex characters are literal', () => {
    check({ a: [{ wildcard: 'a\\*b' }] }, [
      [{ a: 'a*b' }, true],
      [{ a: 'axb' }, false],
    ]);
    check({ a: [{ wildcard: 'c:\\\\*' }] }, [
      [{ a: 'c:\\dir' }, true],
      [{ a: 'c:dir' }, false],
    ]);
    check({ a: [{ wildcard: 'a.c(*)' }] }, [
      [{ a: 'a.c(x)' }, true],
      [{ a: 'abc(x)' }, false],
    ]);
  });

  it('without * it is an exact match', () => {
    check({ a: [{ wildcard: 'abc' }] }, [
      [{ a: 'abc' }, true],
      [{ a: 'abcd' }, false],
    ]);
  });
});

describe('cidr', () => {
  it('IPv4', () => {
    check({ ip: [{ cidr: '10.0.0.0/24' }] }, [
      [{ ip: '10.0.0.0' }, true],
      [{ ip: '10.0.0.255' }, true],
      [{ ip: '10.0.1.0' }, false],
      [{ ip: 'not an ip' }, false],
      [{ ip: '::1' }, false],
      [{ ip: 10 }, false],
    ]);
  });

  it('IPv6', () => {
    check({ ip: [{ cidr: '2001:db8::/32' }] }, [
      [{ ip: '2001:db8::1' }, true],
      [{ ip: '2001:0db8:ffff:ffff:ffff:ffff:ffff:ffff' }, true],
      [{ ip: '2001:db9::1' }, false],
      [{ ip: '10.0.0.1' }, false],
    ]);
  });

  it('the widest prefix event-ruler accepts is /31 (IPv4) and /127 (IPv6)', () => {
    check({ ip: [{ cidr: '10.0.0.2/31' }] }, [
      [{ ip: '10.0.0.2' }, true],
      [{ ip: '10.0.0.3' }, true],
      [{ ip: '10.0.0.4' }, false],
    ]);
    check({ ip: [{ cidr: '2001:db8::/127' }] }, [
      [{ ip: '2001:db8::1' }, true],
      [{ ip: '2001:db8::2' }, false],
    ]);
  });

  it('host bits in the block are masked off, /0 takes every address of its family', () => {
    check({ ip: [{ cidr: '10.0.0.77/24' }] }, [
      [{ ip: '10.0.0.1' }, true],
      [{ ip: '10.0.1.1' }, false],
    ]);
    check({ ip: [{ cidr: '0.0.0.0/0' }] }, [
      [{ ip: '255.255.255.255' }, true],
      [{ ip: '::1' }, false],
    ]);
  });

  it('an IPv6 value with a dotted IPv4 tail or a zone is not an address to event-ruler', () => {
    check({ ip: [{ cidr: '::/0' }] }, [
      [{ ip: '::1' }, true],
      [{ ip: '::ffff:10.0.0.1' }, false],
      [{ ip: 'fe80::1%eth0' }, false],
    ]);
  });

  it('element-wise on arrays', () => {
    check({ ip: [{ cidr: '192.168.0.0/16' }] }, [
      [{ ip: ['10.0.0.1', '192.168.4.4'] }, true],
      [{ ip: ['10.0.0.1'] }, false],
    ]);
  });
});

describe('$or', () => {
  it('any branch, ANDed with sibling fields', () => {
    check({ source: ['s'], $or: [{ a: ['1'] }, { b: ['2'], c: ['3'] }] }, [
      [{ source: 's', a: '1' }, true],
      [{ source: 's', b: '2', c: '3' }, true],
      [{ source: 's', b: '2' }, false],
      [{ a: '1' }, false],
    ]);
  });

  it('nested $or and $or inside a nested object', () => {
    check({ d: { $or: [{ x: [1] }, { $or: [{ y: [2] }, { z: [3] }] }] } }, [
      [{ d: { x: 1 } }, true],
      [{ d: { z: 3 } }, true],
      [{ d: { w: 4 } }, false],
    ]);
  });

  it('parallel $or groups at different levels all apply', () => {
    check({ $or: [{ a: ['1'] }, { b: ['1'] }], d: { $or: [{ c: ['1'] }, { e: ['1'] }] } }, [
      [{ a: '1', d: { e: '1' } }, true],
      [{ b: '1', d: { c: '1' } }, true],
      [{ a: '1', d: {} }, false],
      [{ d: { c: '1' } }, false],
    ]);
  });

  // event-ruler expands $or into one sub-rule per branch before matching, which matters under arrays.
  it('an alternative made only of exists:false must hold for every element of an event array', () => {
    const p: FilterPattern = { items: { $or: [{ sku: ['a'] }, { gift: [{ exists: false }] }] } };
    check(p, [
      [{ items: [{ gift: true }, { qty: 1 }] }, false],
      [{ items: [{ qty: 2 }, { qty: 1 }] }, true],
      [{ items: [{ gift: true }, { sku: 'a' }] }, true],
      [{ items: [] }, true],
    ]);
    check({ items: { $or: [{ a: [{ exists: false }] }, { b: [{ exists: false }] }] } }, [
      [{ items: [{ a: 1 }, { b: 1 }] }, false],
      [{ items: [{ a: 1 }, { c: 1 }] }, true],
    ]);
  });

  it('a branch field and a sibling field under the same event array must come from one element', () => {
    const p: FilterPattern = { items: { sku: ['a'] }, $or: [{ items: { qty: [2] } }, { rush: [true] }] };
    check(p, [
      [{ items: [{ sku: 'a' }, { qty: 2 }] }, false],
      [{ items: [{ sku: 'a', qty: 2 }] }, true],
      [{ items: [{ sku: 'a' }, { qty: 2 }], rush: true }, true],
    ]);
  });

  it('a path named both in a branch and beside the $or keeps the condition written last (event-ruler)', () => {
    // The branch is written after eventName, so that sub-rule asks for MODIFY alone.
    check({ eventName: ['INSERT'], $or: [{ eventName: ['MODIFY'] }, { b: ['1'] }] }, [
      [{ eventName: 'MODIFY' }, true],
      [{ eventName: 'INSERT', b: '1' }, true],
      [{ eventName: 'INSERT' }, false],
    ]);
    // eventName is written after the $or, so it replaces the branch's condition.
    check({ $or: [{ eventName: ['MODIFY'] }, { b: ['1'] }], eventName: ['INSERT'] }, [
      [{ eventName: 'MODIFY' }, false],
      [{ eventName: 'INSERT' }, true],
      [{ eventName: 'INSERT', b: '1' }, true],
    ]);
  });
});

describe('event arrays', () => {
  it('a leaf list matches when any element matches; nested arrays are flattened', () => {
    check({ tags: ['b'] }, [
      [{ tags: ['a', 'b'] }, true],
      [{ tags: [['a'], ['b']] }, true],
      [{ tags: ['a', 'c'] }, false],
      [{ tags: [] }, false],
    ]);
  });

  it('a sub-pattern under an array of objects matches one element (array consistency)', () => {
    const event = {
      employees: [
        { firstName: 'John', lastName: 'Doe' },
        { firstName: 'Anna', lastName: 'Smith' },
        { firstName: 'Peter', lastName: 'Jones' },
      ],
    };
    check({ employees: { firstName: ['Anna'] } }, [[event, true]]);
    check({ employees: { firstName: ['Anna'], lastName: ['Smith'] } }, [[event, true]]);
    check({ employees: { firstName: ['Anna'], lastName: ['Jones'] } }, [[event, false]]);
  });

  it('multi-level arrays', () => {
    const event = {
      employees: [[{ firstName: 'John' }, { firstName: 'Anna' }], [{ firstName: 'Peter' }]],
    };
    check({ employees: { firstName: ['Peter'] } }, [[event, true]]);
    check({ employees: { firstName: ['Mary'] } }, [[event, false]]);
  });

  it('DynamoDB string sets and lists', () => {
    check({ dynamodb: { NewImage: { tags: { SS: ['red'] } } } }, [
      [{ dynamodb: { NewImage: { tags: { SS: ['blue', 'red'] } } } }, true],
      [{ dynamodb: { NewImage: { tags: { SS: ['blue'] } } } }, false],
    ]);
    check({ dynamodb: { NewImage: { items: { L: { S: ['a'] } } } } }, [
      [{ dynamodb: { NewImage: { items: { L: [{ N: '1' }, { S: 'a' }] } } } }, true],
      [{ dynamodb: { NewImage: { items: { L: [{ S: 'b' }] } } } }, false],
    ]);
  });
});

describe('matchesPattern', () => {
  it('accepts the pattern as an object or as JSON text and agrees with compilePattern', () => {
    const p = { a: [{ prefix: 'x' }] } as const;
    expect(matchesPattern(p, { a: 'xy' })).toBe(true);
    expect(matchesPattern(JSON.stringify(p), { a: 'xy' })).toBe(true);
    expect(matchesPattern(JSON.stringify(p), { a: 'yx' })).toBe(false);
  });

  it('a non-object event matches only patterns of pure absences', () => {
    expect(matchesPattern({ a: ['x'] }, null)).toBe(false);
    expect(matchesPattern({ a: ['x'] }, 'a')).toBe(false);
    expect(matchesPattern({ a: [{ exists: false }] }, null)).toBe(true);
  });
});
