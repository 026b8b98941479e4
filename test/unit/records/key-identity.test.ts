import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InvalidAttributeValueError,
  MalformedRecordError,
  UnsupportedValueError,
} from '../../../src/records/errors.js';
import { keyIdentity, keyIdentityOfValues, recordKeyIdentity } from '../../../src/records/key-identity.js';
import { NumberValue } from '../../../src/records/number-value.js';
import {
  numberParts,
  type Spelling,
  spell,
  spellingChoices,
  valueKey,
} from '../../support/number-spellings.js';

/** A key value as a value, and as DynamoDB JSON in a chosen spelling. */
type KeyValue =
  | { type: 'S'; value: string }
  | { type: 'N'; parts: Parameters<typeof valueKey>[0] }
  | { type: 'B'; bytes: Uint8Array };

// Few letters, ':' and digits: names and strings that collide with the identity's own syntax.
const tricky = fc.string({
  unit: fc.constantFrom('a', 'b', ':', '1', '2', 'S', 'N', 'B', 'é', '😀'),
  maxLength: 4,
});
const name = fc.oneof(tricky, fc.string({ unit: 'grapheme', maxLength: 6 }));
const keyValue: fc.Arbitrary<KeyValue> = fc.oneof(
  fc.record({
    type: fc.constant('S' as const),
    // DynamoDB refuses an empty key string or binary: every key value has a character or a byte.
    value: fc.oneof(tricky, fc.string({ unit: 'binary', maxLength: 8 })).filter((v) => v.length > 0),
  }),
  fc.record({ type: fc.constant('N' as const), parts: numberParts }),
  fc.record({ type: fc.constant('B' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 5 }) }),
);
// A table's key: a partition key and an optional sort key.
const key = fc.dictionary(name, keyValue, { minKeys: 1, maxKeys: 2, noNullPrototype: true });
const binarySpelling = fc.constantFrom('padded', 'unpadded', 'url', 'bytes');

function asJson(value: KeyValue, spelling: Spelling, binary: string): unknown {
  if (value.type === 'S') return { S: value.value };
  if (value.type === 'N') return { N: spell(value.parts, spelling) };
  if (binary === 'bytes') return { B: value.bytes };
  const text = Buffer.from(value.bytes).toString(binary === 'url' ? 'base64url' : 'base64');
  return { B: binary === 'unpadded' ? text.replace(/=+$/, '') : text };
}

/** One spelling of a whole key: attributes in a shuffled order, each value spelled its own way. */
const spelledKey = (k: Record<string, KeyValue>) =>
  fc
    .tuple(
      fc.shuffledSubarray(Object.keys(k), { minLength: Object.keys(k).length }),
      fc.array(fc.tuple(spellingChoices, binarySpelling), { minLength: 3, maxLength: 3 }),
    )
    .map(([names, spellings]) => {
      const out: Record<string, unknown> = {};
      names.forEach((n, i) => {
        const [s, b] = spellings[i] as [Spelling, string];
        Object.defineProperty(out, n, { value: asJson(k[n] as KeyValue, s, b), enumerable: true });
      });
      return out;
    });

/** Equality by value, computed apart from the code under test. */
function sameKey(a: Record<string, KeyValue>, b: Record<string, KeyValue>): boolean {
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  return names.every((n) => {
    if (!Object.hasOwn(b, n)) return false;
    const x = a[n] as KeyValue;
    const y = b[n] as KeyValue;
    if (x.type !== y.type) return false;
    if (x.type === 'S') return x.value === (y as typeof x).value;
    if (x.type === 'N') return valueKey(x.parts) === valueKey((y as typeof x).parts);
    return Buffer.from(x.bytes).equals(Buffer.from((y as typeof x).bytes));
  });
}

describe('keyIdentity', () => {
  it('property: two spellings of one key (attribute order, number spelling, base64 form) give one identity', () => {
    fc.assert(
      fc.property(
        key.chain((k) => fc.tuple(spelledKey(k), spelledKey(k))),
        ([a, b]) => {
          expect(keyIdentity(a)).toBe(keyIdentity(b));
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('property: keys that differ by value give different identities (injective)', () => {
    fc.assert(
      fc.property(
        key.chain((k) => fc.tuple(fc.constant(k), spelledKey(k))),
        key.chain((k) => fc.tuple(fc.constant(k), spelledKey(k))),
        ([ka, a], [kb, b]) => {
          expect(keyIdentity(a) === keyIdentity(b)).toBe(sameKey(ka, kb));
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('tells apart keys whose names and values run into each other', () => {
    const ids = [
      { a: { S: '1:bS1:c' } },
      { a: { S: '1' }, b: { S: 'c' } },
      { 'a1:bS': { S: 'c' } },
      { a: { N: '1' } },
      { a: { S: '1' } },
      { a: { B: 'AQ==' } },
    ].map(keyIdentity);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('orders attribute names by code point, not UTF-16 unit', () => {
    // U+FF61 sorts before U+1F600 by code point, after its surrogate pair by UTF-16 unit.
    const a = keyIdentity({ '\u{1F600}': { S: 'x' }, '\uFF61': { S: 'y' } });
    expect(a.indexOf('\uFF61')).toBeLessThan(a.indexOf('\u{1F600}'));
    expect(keyIdentity({ '\uFF61': { S: 'y' }, '\u{1F600}': { S: 'x' } })).toBe(a);
  });

  it('the unmarshalled key gives the identity of its DynamoDB JSON', () => {
    fc.assert(
      fc.property(key, (k) => {
        const values: Record<string, unknown> = {};
        const json: Record<string, unknown> = {};
        for (const [n, v] of Object.entries(k)) {
          const text =
            v.type === 'N'
              ? spell(v.parts, { zeros: 0, point: 0, leading: 0, upper: true, plus: true, plusSign: false })
              : '';
          const value = v.type === 'S' ? v.value : v.type === 'B' ? v.bytes : new NumberValue(text);
          Object.defineProperty(values, n, { value, enumerable: true });
          Object.defineProperty(json, n, {
            value: asJson(
              v,
              { zeros: 1, point: 2, leading: 1, upper: false, plus: false, plusSign: true },
              'url',
            ),
            enumerable: true,
          });
        }
        expect(keyIdentityOfValues(values)).toBe(keyIdentity(json));
      }),
    );
    expect(keyIdentityOfValues({ n: 1.5, b: 15n })).toBe(
      keyIdentity({ b: { N: '1.5E+1' }, n: { N: '1.50' } }),
    );
  });

  it('refuses what is not a key DynamoDB could hold with a typed error naming the attribute, never its value', () => {
    const bad: unknown[] = [
      null,
      'pk',
      [],
      { pk: null },
      { pk: 'x' },
      { pk: { BOOL: true } },
      { pk: {} },
      { pk: { S: 'a', N: '1' } },
      { pk: { N: 'secret' } },
      { pk: { N: '1E+999999999' } },
      { pk: { B: 'sécret!' } },
      { pk: { S: 5 } },
      // No item has these keys: DynamoDB refuses an empty key string or binary, and a key has one
      // or two attributes.
      {},
      { pk: { S: '' } },
      { pk: { B: '' } },
      { pk: { B: new Uint8Array(0) } },
      { a: { S: 'x' }, b: { S: 'y' }, c: { S: 'z' } },
    ];
    for (const input of bad) {
      let thrown: unknown;
      try {
        keyIdentity(input);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(input)).toBeInstanceOf(InvalidAttributeValueError);
      expect((thrown as Error).message).not.toMatch(/secret|sécret/);
    }
    expect(() => keyIdentityOfValues({ pk: true })).toThrow(UnsupportedValueError);
    expect(() => keyIdentityOfValues({ pk: Number.NaN })).toThrow(UnsupportedValueError);
    expect(() => keyIdentityOfValues({})).toThrow(InvalidAttributeValueError);
    expect(() => keyIdentityOfValues({ pk: '' })).toThrow(InvalidAttributeValueError);
    expect(() => keyIdentityOfValues({ pk: new Uint8Array(0) })).toThrow(InvalidAttributeValueError);
  });

  it('a record whose key cannot be named is a MalformedRecordError with its identity and the path', () => {
    const record = { eventID: 'e1', sequenceNumber: '42', raw: { dynamodb: { Keys: { sk: { N: 'x' } } } } };
    expect(() => recordKeyIdentity(record)).toThrow(MalformedRecordError);
    expect(() => recordKeyIdentity(record)).toThrow(/eventID=e1 sequenceNumber=42 at dynamodb\.Keys\.sk/);
  });

  it("takes an own '__proto__' attribute as a name like any other", () => {
    const a = JSON.parse('{"__proto__": {"S": "x"}, "pk": {"S": "y"}}');
    expect(keyIdentity(a)).not.toBe(keyIdentity({ pk: { S: 'y' } }));
  });
});
