import {
  NumberValueImpl as SdkNumberValue,
  marshall as sdkMarshall,
  unmarshall as sdkUnmarshall,
} from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toGetRecordsRecord } from '../../../src/records/convert.js';
import {
  marshall,
  marshallValue,
  NumberValue,
  unmarshall,
  unmarshallValue,
} from '../../../src/records/index.js';
import type { AttributeMap, SdkAttributeMap } from '../../../src/records/types.js';
import { itemArbitrary, numberText } from './arbitraries.js';

type Json = unknown;

/** util-dynamodb's map (Uint8Array binaries) in the Lambda shape (base64 binaries). */
function lambdaShape(value: Json): Json {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(lambdaShape);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, lambdaShape(v)]));
  }
  return value;
}

/**
 * A comparable form: every number as its exact text, whichever representation carried it,
 * sets as arrays in iteration order, binaries as byte arrays.
 */
function canonical(value: unknown): Json {
  if (typeof value === 'number' || typeof value === 'bigint') return { n: String(value) };
  if (value instanceof NumberValue || value instanceof SdkNumberValue) return { n: value.toString() };
  if (value instanceof Uint8Array) return { b: Array.from(value) };
  if (value instanceof Set) return { set: Array.from(value, canonical) };
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, canonical(v)]));
  }
  return value;
}

const runs = { numRuns: 400 };

describe('unmarshall / marshall against @aws-sdk/util-dynamodb (property)', () => {
  it('util marshall → our unmarshall → our marshall is the identical Lambda-shape map', () => {
    fc.assert(
      fc.property(itemArbitrary({ exact: true }), (item) => {
        const lambdaMap = lambdaShape(sdkMarshall(item)) as AttributeMap;
        expect(marshall(unmarshall(lambdaMap), { binary: 'base64' })).toStrictEqual(lambdaMap);
      }),
      runs,
    );
  });

  it('the SDK shape (Uint8Array binaries) round-trips with binary: bytes', () => {
    fc.assert(
      fc.property(itemArbitrary({ exact: true }), (item) => {
        const sdkMap = sdkMarshall(item) as SdkAttributeMap;
        const back = marshall(unmarshall(sdkMap), { binary: 'bytes' });
        expect(canonicalMap(back)).toStrictEqual(canonicalMap(sdkMap));
      }),
      runs,
    );
  });

  it('the Lambda → GetRecords → Lambda record conversion is lossless', () => {
    fc.assert(
      fc.property(itemArbitrary({ exact: true }), (item) => {
        const image = lambdaShape(sdkMarshall(item)) as AttributeMap;
        const record = {
          eventID: 'e',
          eventName: 'INSERT' as const,
          dynamodb: {
            Keys: image,
            NewImage: image,
            SequenceNumber: '1',
            ApproximateCreationDateTime: 1700000000,
          },
        };
        const sdk = toGetRecordsRecord(record);
        expect(lambdaShape(sdk.dynamodb?.NewImage)).toStrictEqual(image);
      }),
      runs,
    );
  });

  it('agrees with util-dynamodb value for value when util keeps numbers exact (wrapNumbers)', () => {
    fc.assert(
      fc.property(itemArbitrary({ exact: true }), (item) => {
        const sdkMap = sdkMarshall(item);
        const ours = unmarshall(lambdaShape(sdkMap) as AttributeMap);
        const theirs = sdkUnmarshall(sdkMap, { wrapNumbers: true });
        expect(canonical(ours)).toStrictEqual(canonical(theirs));
      }),
      runs,
    );
  });

  it('is equal to util-dynamodb default unmarshall where that is exact (safe numbers)', () => {
    fc.assert(
      fc.property(itemArbitrary({ exact: false }), (item) => {
        const sdkMap = sdkMarshall(item);
        const ours = unmarshall(sdkMap as AttributeMap);
        expect(ours).toStrictEqual(sdkUnmarshall(sdkMap));
      }),
      runs,
    );
  });
});

describe('the exact number policy (property)', () => {
  it('a number result always prints back to the identical text; anything else keeps the text', () => {
    const texts = fc.oneof(
      numberText,
      // Doubles DynamoDB can hold (0, or 1E-130 ≤ |d| < 1E+126); the others are refused (numbers.test).
      fc
        .double({ noNaN: true, noDefaultInfinity: true })
        .filter((d) => d === 0 || (Math.abs(d) >= 1e-130 && Math.abs(d) < 1e126))
        .map(String),
      fc.integer().map((n) => `${n}.${'0'.repeat(n & 3)}${Math.abs(n) % 1000}`),
    );
    fc.assert(
      fc.property(texts, (text) => {
        const value = unmarshallValue({ N: text });
        if (typeof value === 'number') expect(String(value)).toBe(text);
        else if (typeof value === 'bigint') expect(value.toString()).toBe(text);
        else expect((value as NumberValue).value).toBe(text);
        expect(marshallValue(value)).toStrictEqual({ N: text });
      }),
      { numRuns: 2000 },
    );
  });
});

function canonicalMap(map: AttributeMap | SdkAttributeMap): Json {
  return lambdaShape(map);
}
