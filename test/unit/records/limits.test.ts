import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AttributeMap, NumberPolicy } from '../../../src/records/index.js';
import {
  InvalidAttributeValueError,
  MalformedRecordError,
  NumberValue,
  parseStreamRecord,
  unmarshall,
  unmarshallValue,
} from '../../../src/records/index.js';
import { isValidNumber, numberLimitProblem } from '../../../src/records/limits.js';
import { isNumberText } from '../../../src/records/number-text.js';
import { isValidAttributeMap, recordImageError } from '../../../src/records/validate.js';
import { numberText } from './arbitraries.js';
import { thrown } from './fixtures.js';

// DynamoDB's limits (Developer Guide, data types): numbers of up to 38 significant digits in
// 1E-130 … 9.9999999999999999999999999999999999999E+125 either sign; no empty sets; set members
// unique; nesting to 32 levels (a top-level attribute is level 1: 31 maps around a scalar are
// stored, 32 are refused).

function problem(map: unknown): { reason: string; path: string } | undefined {
  try {
    unmarshall(map as AttributeMap);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidAttributeValueError);
    const { reason, path } = error as InvalidAttributeValueError;
    return { reason, path };
  }
}

/** The converter and the validator give the same verdict; returns the converter's problem. */
function verdict(map: unknown): { reason: string; path: string } | undefined {
  const found = problem(map);
  expect(isValidAttributeMap(map)).toBe(found === undefined);
  return found;
}

function nested(levels: number, list: boolean, leaf: unknown = { S: 'x' }): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = list ? { L: [value] } : { M: { n: value } };
  return value;
}

const POLICIES: NumberPolicy[] = ['exact', 'string', 'number', (text) => `<${text}>`];

describe('numbers: range and precision', () => {
  it.each([
    '1E-130',
    '-1E-130',
    '9.9999999999999999999999999999999999999E+125',
    '-9.9999999999999999999999999999999999999E+125',
    '12345678901234567890123456789012345678',
    '1234567890123456789.0123456789012345678',
    `1${'0'.repeat(125)}`,
    '0.00000000000000000000000000000000000001',
    `0.${'0'.repeat(129)}1`,
    '1.500000000000000000000000000000000000000000',
    '0E+999',
    '-0.000',
  ])('%s is a number DynamoDB holds: every policy takes it', (text) => {
    for (const numbers of POLICIES) {
      expect(verdict({ n: { N: text }, s: { NS: [text] } })).toBeUndefined();
      expect(() => unmarshall({ n: { N: text } }, { numbers })).not.toThrow();
    }
  });

  it.each([
    ['1E-131', 'below'],
    ['-1E-131', 'below'],
    ['0.1E-130', 'below'],
    ['1E+126', 'above'],
    ['-10E+125', 'above'],
    [`1${'0'.repeat(126)}`, 'above'],
    [`1${'2'.repeat(38)}`, 'digits'],
    [`-0.${'7'.repeat(39)}`, 'digits'],
    [`1.${'0'.repeat(37)}1`, 'digits'],
  ])('%s is outside DynamoDB (%s): every policy refuses it with the path', (text) => {
    for (const numbers of POLICIES) {
      const error = thrown(() => unmarshall({ a: { L: [{ S: 'ok' }, { N: text }] } }, { numbers }));
      expect(error).toBeInstanceOf(InvalidAttributeValueError);
      expect(error).toMatchObject({ reason: 'number-out-of-range', path: 'a[1]' });
      expect((error as Error).message).toContain('(at a[1])');
    }
    expect(verdict({ s: { NS: ['1', text] } })).toEqual({ reason: 'number-out-of-range', path: 's[1]' });
  });

  it('the one-pass check agrees with the syntax and the limits checked apart (property)', () => {
    const numberish = fc.oneof(
      numberText,
      fc.string({ unit: fc.constantFrom(...'0123456789.eE+- x'), maxLength: 14 }),
      fc
        .tuple(fc.stringMatching(/^-?\d{1,45}(\.\d{0,45})?$/), fc.integer({ min: -260, max: 260 }))
        .map(([m, e]) => `${m}E${e}`),
    );
    fc.assert(
      fc.property(numberish, (text) => {
        expect(isValidNumber(text)).toBe(isNumberText(text) && numberLimitProblem(text) === undefined);
      }),
      { numRuns: 5_000 },
    );
  });

  it('a 38-digit integer is a bigint; trailing zeros are not precision', () => {
    expect(unmarshallValue({ N: '9'.repeat(38) })).toBe(10n ** 38n - 1n);
    expect(unmarshallValue({ N: `7${'0'.repeat(60)}` })).toBe(7n * 10n ** 60n);
    expect(unmarshallValue({ N: `1.${'2'.repeat(36)}0` })).toBeInstanceOf(NumberValue);
  });

  it('every number text of the documented range is accepted, and scaled past it refused (property)', () => {
    fc.assert(
      fc.property(numberText, (text) => {
        expect(verdict({ n: { N: text } })).toBeUndefined();
        const mantissa = text.replace(/E.*$/, '');
        for (const exponent of ['E+200', 'E-200']) {
          if (/^-?0*\.?0*$/.test(mantissa)) continue; // zero is zero at any scale
          expect(verdict({ n: { N: `${mantissa}${exponent}` } })).toEqual({
            reason: 'number-out-of-range',
            path: 'n',
          });
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('sets', () => {
  it.each([{ SS: [] }, { NS: [] }, { BS: [] }])('%j: DynamoDB has no empty sets', (value) => {
    expect(verdict({ tags: { M: { set: value } } })).toEqual({ reason: 'empty-set', path: 'tags.set' });
  });

  it.each([
    [{ SS: ['a', 'b', 'a'] }, 2],
    [{ NS: ['1', '2', '1'] }, 2],
    [{ NS: ['1', '1.0'] }, 1],
    [{ NS: ['10', '1E+1'] }, 1],
    [{ NS: ['0', '-0'] }, 1],
    [{ NS: ['-2.50', '-0.25E1'] }, 1],
    [{ NS: ['123456789012345678901234567890', '1.2345678901234567890123456789E+29'] }, 1],
    [{ BS: ['AQ==', 'Ag==', 'AQ'] }, 2],
    [{ BS: ['+/8=', '-_8='] }, 1],
    // The unused low bits of the last character do not count.
    [{ BS: ['AQ==', 'AR=='] }, 1],
    [{ BS: [new Uint8Array([1, 2]), 'AQI='] }, 1],
  ])('%j holds a member twice (the second at %i)', (value, at) => {
    expect(verdict({ s: value })).toEqual({ reason: 'duplicate-set-member', path: `s[${at}]` });
  });

  it('large sets are checked as well as small ones', () => {
    const many = Array.from({ length: 40 }, (_, i) => `m${i}`);
    expect(verdict({ s: { SS: many } })).toBeUndefined();
    expect(verdict({ s: { SS: [...many, 'm7'] } })).toEqual({
      reason: 'duplicate-set-member',
      path: 's[40]',
    });
    const numbers = Array.from({ length: 40 }, (_, i) => `${i}.5`);
    expect(verdict({ s: { NS: [...numbers, '7.50'] } })).toEqual({
      reason: 'duplicate-set-member',
      path: 's[40]',
    });
    const binaries = Array.from({ length: 40 }, (_, i) => Buffer.from([i, i]).toString('base64'));
    expect(verdict({ s: { BS: binaries } })).toBeUndefined();
    expect(verdict({ s: { BS: [...binaries, binaries[3]!.replace(/=+$/, '')] } })).toEqual({
      reason: 'duplicate-set-member',
      path: 's[40]',
    });
  });

  it('distinct members of every kind pass, under every number policy', () => {
    const map = {
      s: { SS: ['a', 'A'] },
      n: { NS: ['1', '1.01', '-1', '1E-130'] },
      b: { BS: ['AQ==', 'AQI='] },
    };
    for (const numbers of POLICIES) expect(() => unmarshall(map, { numbers })).not.toThrow();
    expect(verdict(map)).toBeUndefined();
  });
});

describe('nesting', () => {
  it.each([false, true])('31 levels around a scalar are stored, 32 are too deep (lists: %s)', (list) => {
    expect(verdict({ top: nested(31, list) })).toBeUndefined();
    const found = verdict({ top: nested(32, list) });
    expect(found?.reason).toBe('too-deep');
    // The path names the container whose members would sit at level 33.
    expect(found?.path.split(/\.|\[/).length).toBe(32);
  });

  it.each([false, true])(
    'an empty map or list at level 32 holds nothing at level 33: stored, by converter and validator alike (lists: %s)',
    (list) => {
      for (const empty of [{ M: {} }, { L: [] }]) {
        expect(verdict({ top: nested(31, list, empty) })).toBeUndefined();
        expect(verdict({ top: nested(31, list, { M: { n: empty } }) })?.reason).toBe('too-deep');
      }
    },
  );

  it('a value thousands of levels deep is refused without a RangeError, through every door', () => {
    const deep = { top: nested(20_000, false) };
    const deepList = { top: nested(20_000, true) };
    for (const map of [deep, deepList]) {
      expect(thrown(() => unmarshall(map as AttributeMap))).toBeInstanceOf(InvalidAttributeValueError);
      expect(isValidAttributeMap(map)).toBe(false);
    }
    expect(thrown(() => unmarshallValue(deep.top as never))).toMatchObject({ reason: 'too-deep' });
    const raw = {
      eventID: 'e1',
      eventName: 'REMOVE',
      dynamodb: {
        Keys: { pk: { S: 'k' } },
        OldImage: deep,
        SequenceNumber: '42',
        ApproximateCreationDateTime: 1_767_225_600,
      },
    };
    for (const options of [{ validate: true }, { eager: true }]) {
      const error = thrown(() => parseStreamRecord(raw, options));
      expect(error).toBeInstanceOf(MalformedRecordError);
      expect(error).toMatchObject({ reason: 'invalid-attribute-value', sequenceNumber: '42' });
      expect((error as MalformedRecordError).path).toMatch(/^dynamodb\.OldImage\.top\.n\.n/);
    }
    const lazy = parseStreamRecord(raw);
    expect(thrown(() => lazy.oldImage)).toBeInstanceOf(MalformedRecordError);
    expect(recordImageError(lazy)).toBeInstanceOf(MalformedRecordError);
  });
});

describe('recordImageError', () => {
  const base = {
    eventID: 'e1',
    eventName: 'MODIFY',
    dynamodb: {
      Keys: { pk: { S: 'k' } },
      SequenceNumber: '42',
      ApproximateCreationDateTime: 1_767_225_600,
      NewImage: { pk: { S: 'k' }, n: { N: '1' } },
      OldImage: { pk: { S: 'k' }, n: { N: '2' } },
    },
  };

  it('is undefined for a record DynamoDB could send', () => {
    expect(recordImageError(parseStreamRecord(base))).toBeUndefined();
  });

  it.each([
    ['Keys', { pk: { S: 'k', N: '1' } }, 'dynamodb.Keys.pk', 'invalid-attribute-value'],
    ['NewImage', { pk: { S: 'k' }, n: { N: '12abc' } }, 'dynamodb.NewImage.n', 'invalid-number'],
    ['OldImage', { pk: { S: 'k' }, tags: { SS: 'a' } }, 'dynamodb.OldImage.tags', 'invalid-attribute-value'],
    ['OldImage', { pk: { S: 'k' }, n: { N: '1E+200' } }, 'dynamodb.OldImage.n', 'invalid-number'],
    ['NewImage', { pk: { S: 'k' }, x: { Z: '1' } }, 'dynamodb.NewImage.x', 'invalid-attribute-value'],
  ])('names the record and the path of a bad value in %s', (name, map, path, reason) => {
    const record = parseStreamRecord({ ...base, dynamodb: { ...base.dynamodb, [name]: map } });
    const error = recordImageError(record);
    expect(error).toBeInstanceOf(MalformedRecordError);
    expect(error).toMatchObject({ reason, path, eventID: 'e1', sequenceNumber: '42' });
    // The same error the record's own getter throws.
    const getter = name === 'Keys' ? 'keys' : name === 'NewImage' ? 'newImage' : 'oldImage';
    expect(thrown(() => record[getter])).toMatchObject({ reason, path, message: error?.message });
  });
});
