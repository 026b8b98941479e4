import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import {
  InvalidAttributeValueError,
  marshall,
  NumberValue,
  parseStreamRecord,
  unmarshall,
  unmarshallValue,
} from '../../../src/records/index.js';

const exact = (text: string) => unmarshallValue({ N: text });

function malformedRecord(n: string) {
  return {
    eventID: 'e1',
    eventName: 'INSERT',
    eventSource: 'aws:dynamodb',
    dynamodb: {
      Keys: { pk: { S: 'k' } },
      NewImage: { pk: { S: 'k' }, n: { N: n } },
      SequenceNumber: '100',
      StreamViewType: 'NEW_IMAGE',
    },
  };
}

describe('numbers: exact policy (default)', () => {
  it.each([
    ['0', 0],
    ['-42', -42],
    ['9007199254740991', 9007199254740991],
    ['-9007199254740991', -9007199254740991],
    ['0.1', 0.1],
    ['-2.5', -2.5],
    ['1e-7', 1e-7],
  ])('%s becomes the number %s', (text, value) => {
    expect(exact(text)).toBe(value);
  });

  it.each([
    ['9007199254740993', 9007199254740993n],
    ['-9007199254740993', -9007199254740993n],
    ['100000000000000000000', 100000000000000000000n],
    ['12345678901234567890123456789012345678', 12345678901234567890123456789012345678n],
  ])('the integer %s that a double cannot hold becomes a bigint', (text, value) => {
    expect(exact(text)).toBe(value);
  });

  it.each([
    '1.50',
    '0.30000000000000000001',
    '1E-130',
    '9.9999999999999999999999999999999999999E+125',
    '-0',
    '007',
    '+5',
    '1E+2',
    '.5',
  ])('%s keeps its exact text in a NumberValue', (text) => {
    const value = exact(text);
    expect(value).toBeInstanceOf(NumberValue);
    expect((value as NumberValue).value).toBe(text);
    expect(String(value)).toBe(text);
    expect(JSON.stringify({ value })).toBe(`{"value":${JSON.stringify(text)}}`);
  });

  it('marshall writes every representation back to the identical N text', () => {
    const texts = ['0', '-42', '0.1', '9007199254740993', '1.50', '1E-130', '-0', '100000000000000000000'];
    const map = Object.fromEntries(texts.map((t, i) => [`a${i}`, { N: t }]));
    expect(marshall(unmarshall(map))).toStrictEqual(map);
    // '-0' is 0 again: DynamoDB would not hold both in one set.
    const members = texts.filter((t) => t !== '-0');
    expect(marshall(unmarshall({ s: { NS: members } }))).toStrictEqual({ s: { NS: members } });
  });

  it.each(['', 'abc', '1,5', ' 1', '1 ', '0x10', 'Infinity', 'NaN', '1e', '--1', '1.2.3'])(
    '%j is not a number: a typed error',
    (text) => {
      const error = (() => {
        try {
          unmarshall({ price: { N: text } });
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(InvalidAttributeValueError);
      expect(error).toMatchObject({
        name: 'InvalidAttributeValueError',
        reason: 'invalid-number',
        path: 'price',
      });
    },
  );

  it('a bad N is described by its length and path, never repeated (it is item data)', () => {
    const secret = 'SSN-123-45-6789';
    const messages = [
      () => unmarshall({ profile: { M: { id: { N: secret } } } }),
      () => new NumberValue(secret),
      () => parseStreamRecord(malformedRecord(secret), { validate: true }),
    ].map((run) => {
      try {
        run();
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error('no error');
    });
    for (const message of messages) {
      expect(message).not.toContain('123');
      expect(message).toContain(`${secret.length} characters`);
    }
    expect(messages[0]).toContain('profile.id');
    expect(messages[2]).toContain('dynamodb.NewImage.n');
  });

  it('rejects an N that is not a string', () => {
    expect(() => unmarshallValue({ N: 5 as unknown as string })).toThrow(InvalidAttributeValueError);
  });
});

describe('numbers: other policies', () => {
  it("'string' returns the text, checked", () => {
    expect(unmarshall({ a: { N: '1.50' }, b: { NS: ['7'] } }, { numbers: 'string' })).toStrictEqual({
      a: '1.50',
      b: new Set(['7']),
    });
    expect(() => unmarshallValue({ N: 'x' }, { numbers: 'string' })).toThrow(InvalidAttributeValueError);
  });

  it("'number' rounds instead of throwing (util-dynamodb throws on 38 digits)", () => {
    expect(unmarshallValue({ N: '12345678901234567890123456789012345678' }, { numbers: 'number' })).toBe(
      1.2345678901234568e37,
    );
    expect(unmarshallValue({ N: '1E-130' }, { numbers: 'number' })).toBe(1e-130);
  });

  it('a function receives the checked text', () => {
    const seen: string[] = [];
    const value = unmarshallValue(
      { N: '2.50' },
      {
        numbers: (t) => {
          seen.push(t);
          return `#${t}`;
        },
      },
    );
    expect(value).toBe('#2.50');
    expect(seen).toEqual(['2.50']);
    expect(() => unmarshallValue({ N: 'bad' }, { numbers: () => 1 })).toThrow(InvalidAttributeValueError);
  });

  it('an unknown policy or option key fails loudly', () => {
    expect(() => unmarshall({}, { numbers: 'exactly' as never })).toThrow(InvalidOptionsError);
    expect(() => unmarshall({}, { number: 'string' } as never)).toThrow(/unknown option 'number'/);
  });
});

describe('NumberValue', () => {
  it('validates its text', () => {
    expect(() => new NumberValue('1.2.3')).toThrow(InvalidAttributeValueError);
    expect(new NumberValue(12n).value).toBe('12');
  });

  it('converts to bigint exactly when the value is an integer', () => {
    expect(new NumberValue('1.5E+3').toBigInt()).toBe(1500n);
    expect(new NumberValue('150.00').toBigInt()).toBe(150n);
    expect(new NumberValue('-12E-1').toNumber()).toBe(-1.2);
    expect(new NumberValue('1.2E+40').toBigInt()).toBe(12n * 10n ** 39n);
    expect(() => new NumberValue('1.5').toBigInt()).toThrow(RangeError);
  });
});
