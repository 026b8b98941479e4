import { describe, expect, it } from 'vitest';
import { TidewaterError } from '../../../src/core/errors.js';
import {
  compilePattern,
  type FilterPattern,
  InvalidPatternError,
  type InvalidPatternReason,
} from '../../../src/filters/index.js';

function refusal(pattern: unknown): InvalidPatternError {
  try {
    compilePattern(pattern as never);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidPatternError);
    expect(error).toBeInstanceOf(TidewaterError);
    return error as InvalidPatternError;
  }
  throw new Error(`pattern was accepted: ${JSON.stringify(pattern)}`);
}

const cases: [string, unknown, InvalidPatternReason, string][] = [
  ['JSON syntax error', '{"a": [', 'not-json', '$'],
  ['top level not an object', '["a"]', 'not-an-object', '$'],
  ['top level null', null, 'not-an-object', '$'],
  ['empty pattern', {}, 'empty-object', '$'],
  ['empty nested object', { a: {} }, 'empty-object', '$.a'],
  ['non-array value', { eventName: 'INSERT' }, 'not-an-array', '$.eventName'],
  [
    'non-array nested value',
    { dynamodb: { Keys: { pk: { S: 'x' } } } },
    'not-an-array',
    '$.dynamodb.Keys.pk.S',
  ],
  ['number as field value', { a: 1 }, 'not-an-array', '$.a'],
  ['empty condition list', { a: [] }, 'empty-array', '$.a'],
  ['array inside a condition list', { a: [['x']] }, 'invalid-value', '$.a[0]'],
  ['unknown operator', { a: [{ startsWith: 'x' }] }, 'unknown-operator', '$.a[0]'],
  ['empty operator object', { a: [{}] }, 'unknown-operator', '$.a[0]'],
  ['two operators in one object', { a: [{ prefix: 'x', suffix: 'y' }] }, 'invalid-operand', '$.a[0]'],
  ['prefix with a number', { a: [{ prefix: 1 }] }, 'invalid-operand', '$.a[0].prefix'],
  [
    'prefix with an unknown sub-operator',
    { a: [{ prefix: { wildcard: 'x' } }] },
    'unknown-operator',
    '$.a[0].prefix',
  ],
  [
    'equals-ignore-case with an array',
    { a: [{ 'equals-ignore-case': ['x'] }] },
    'invalid-operand',
    '$.a[0].equals-ignore-case',
  ],
  ['exists with a string', { a: [{ exists: 'true' }] }, 'invalid-operand', '$.a[0].exists'],
  ['numeric not an array', { a: [{ numeric: 5 }] }, 'invalid-numeric', '$.a[0].numeric'],
  ['numeric unknown operator', { a: [{ numeric: ['!=', 5] }] }, 'invalid-numeric', '$.a[0].numeric[0]'],
  ['numeric operand a string', { a: [{ numeric: ['>', '5'] }] }, 'invalid-numeric', '$.a[0].numeric[1]'],
  ['numeric empty range', { a: [{ numeric: ['>', 5, '<', 5] }] }, 'invalid-numeric', '$.a[0].numeric'],
  ['numeric reversed range', { a: [{ numeric: ['>', 10, '<=', 1] }] }, 'invalid-numeric', '$.a[0].numeric'],
  [
    'numeric upper bound first',
    { a: [{ numeric: ['<', 10, '>', 1] }] },
    'invalid-numeric',
    '$.a[0].numeric[2]',
  ],
  [
    'numeric two lower bounds',
    { a: [{ numeric: ['>', 1, '>=', 2] }] },
    'invalid-numeric',
    '$.a[0].numeric[2]',
  ],
  ['numeric too many terms', { a: [{ numeric: ['=', 1, '<', 2] }] }, 'invalid-numeric', '$.a[0].numeric'],
  ['numeric missing value', { a: [{ numeric: ['>'] }] }, 'invalid-numeric', '$.a[0].numeric'],
  ['numeric beyond 5e9', { a: [{ numeric: ['<', 6e9] }] }, 'invalid-numeric', '$.a[0].numeric[1]'],
  ['numeric with 7 decimals', { a: [{ numeric: ['=', 0.1234567] }] }, 'invalid-numeric', '$.a[0].numeric[1]'],
  [
    'numeric lower bound at the top of the range',
    { a: [{ numeric: ['>', 5e9] }] },
    'invalid-numeric',
    '$.a[0].numeric',
  ],
  ['cidr without a prefix length', { ip: [{ cidr: '10.0.0.1' }] }, 'invalid-cidr', '$.ip[0].cidr'],
  ['cidr with a bad address', { ip: [{ cidr: '10.0.0.300/24' }] }, 'invalid-cidr', '$.ip[0].cidr'],
  ['cidr prefix too long for IPv4', { ip: [{ cidr: '10.0.0.0/33' }] }, 'invalid-cidr', '$.ip[0].cidr'],
  ['cidr prefix too long for IPv6', { ip: [{ cidr: '::/129' }] }, 'invalid-cidr', '$.ip[0].cidr'],
  ['cidr with text prefix', { ip: [{ cidr: '10.0.0.0/x' }] }, 'invalid-cidr', '$.ip[0].cidr'],
  ['cidr not a string', { ip: [{ cidr: 24 }] }, 'invalid-cidr', '$.ip[0].cidr'],
  [
    'cidr IPv4 /32 (event-ruler: mask bits < 32)',
    { ip: [{ cidr: '10.0.0.1/32' }] },
    'invalid-cidr',
    '$.ip[0].cidr',
  ],
  [
    'cidr IPv6 /128 (event-ruler: mask bits < 128)',
    { ip: [{ cidr: '::1/128' }] },
    'invalid-cidr',
    '$.ip[0].cidr',
  ],
  [
    'cidr IPv6 with a dotted IPv4 tail',
    { ip: [{ cidr: '::ffff:10.0.0.0/104' }] },
    'invalid-cidr',
    '$.ip[0].cidr',
  ],
  ['cidr IPv6 with a zone', { ip: [{ cidr: 'fe80::%eth0/64' }] }, 'invalid-cidr', '$.ip[0].cidr'],
  ['wildcard with consecutive stars', { a: [{ wildcard: 'a**b' }] }, 'invalid-wildcard', '$.a[0].wildcard'],
  ['wildcard with a bad escape', { a: [{ wildcard: 'a\\b' }] }, 'invalid-wildcard', '$.a[0].wildcard'],
  ['wildcard with a trailing backslash', { a: [{ wildcard: 'a\\' }] }, 'invalid-wildcard', '$.a[0].wildcard'],
  [
    'anything-but mixed types',
    { a: [{ 'anything-but': ['x', 1] }] },
    'invalid-operand',
    '$.a[0].anything-but',
  ],
  ['anything-but with null', { a: [{ 'anything-but': [null] }] }, 'invalid-operand', '$.a[0].anything-but'],
  ['anything-but boolean', { a: [{ 'anything-but': true }] }, 'invalid-operand', '$.a[0].anything-but'],
  ['anything-but empty list', { a: [{ 'anything-but': [] }] }, 'empty-array', '$.a[0].anything-but'],
  [
    'anything-but unknown sub-operator',
    { a: [{ 'anything-but': { numeric: ['>', 1] } }] },
    'unknown-operator',
    '$.a[0].anything-but.numeric',
  ],
  [
    'anything-but empty prefix',
    { a: [{ 'anything-but': { prefix: '' } }] },
    'invalid-operand',
    '$.a[0].anything-but.prefix',
  ],
  [
    'anything-but number out of range',
    { a: [{ 'anything-but': 1e10 }] },
    'invalid-numeric',
    '$.a[0].anything-but',
  ],
  [
    'anything-but bad wildcard',
    { a: [{ 'anything-but': { wildcard: ['ok*', 'x**'] } }] },
    'invalid-wildcard',
    '$.a[0].anything-but.wildcard[1]',
  ],
  ['$or not an array', { $or: { a: ['x'] } }, 'invalid-or', '$.$or'],
  ['$or with one branch', { $or: [{ a: ['x'] }] }, 'invalid-or', '$.$or'],
  ['$or with a non-object branch', { $or: [{ a: ['x'] }, ['y']] }, 'invalid-or', '$.$or[1]'],
  [
    '$or branch using an operator name as a field',
    { $or: [{ numeric: [1] }, { prefix: ['a'] }] },
    'invalid-or',
    '$.$or[0].numeric',
  ],
  [
    '$or branch using a name event-ruler reserves for future operators',
    { $or: [{ a: ['x'] }, { detail: { 'date-after': ['x'] } }] },
    'invalid-or',
    '$.$or[1].detail.date-after',
  ],
  [
    '$or branch using "regex" as a field',
    { $or: [{ regex: ['x'] }, { a: ['y'] }] },
    'invalid-or',
    '$.$or[0].regex',
  ],
  [
    '$or combinations past the bound',
    Object.fromEntries(
      Array.from({ length: 11 }, (_, i) => [`f${i}`, { $or: [{ a: ['1'] }, { b: ['1'] }] }]),
    ),
    'invalid-or',
    '$.f10.$or',
  ],
  ['non-finite number', { a: [Number.NaN] }, 'invalid-value', '$.a[0]'],
];

describe('invalid patterns give InvalidPatternError with the reason and the path', () => {
  it.each(cases)('%s', (_title, pattern, reason, path) => {
    const error = refusal(pattern);
    expect(error.name).toBe('InvalidPatternError');
    expect(error.reason).toBe(reason);
    expect(error.path).toBe(path);
    expect(error.message).toContain(path);
    expect(error.message).toContain(reason);
  });

  it('operator names are ordinary field names outside $or', () => {
    expect(compilePattern({ prefix: ['x'] })({ prefix: 'x' })).toBe(true);
  });

  it('ten parallel $or pairs (1,024 combinations) are still accepted', () => {
    const ten: FilterPattern = Object.fromEntries(
      Array.from({ length: 10 }, (_, i): [string, FilterPattern] => [
        `f${i}`,
        { $or: [{ a: ['1'] }, { b: ['1'] }] },
      ]),
    );
    const matcher = compilePattern(ten);
    const both = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, { a: '1' }]));
    expect(matcher(both)).toBe(true);
    expect(matcher({ ...both, f9: { c: '1' } })).toBe(false);
  });

  it('a /32 block explains how to match one address', () => {
    expect(refusal({ ip: [{ cidr: '10.0.0.1/32' }] }).message).toMatch(/match the address exactly/);
  });

  it('the numeric message explains the supported range', () => {
    expect(refusal({ a: [{ numeric: ['<', 6e9] }] }).message).toMatch(/-5e9 and 5e9/);
  });
});
