import { marshall as sdkMarshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { isBase64 } from '../../../src/records/binary.js';
import {
  InvalidAttributeValueError,
  MalformedRecordError,
  parseStreamRecord,
  unmarshall,
} from '../../../src/records/index.js';
import type { AttributeMap } from '../../../src/records/types.js';
import { isValidAttributeMap } from '../../../src/records/validate.js';
import { attributeMapArbitrary, itemArbitrary } from './arbitraries.js';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error;
  }
}

function record(image: unknown) {
  return {
    eventID: 'e1',
    eventName: 'MODIFY',
    eventSourceARN: 'arn:aws:dynamodb:eu-west-1:123456789012:table/T/stream/x',
    dynamodb: { Keys: { pk: { S: 'k' } }, NewImage: image, OldImage: image, SequenceNumber: '42' },
  };
}

/** What a caller can observe of a parse/getter failure. */
function observed(error: unknown) {
  if (error === undefined) return undefined;
  if (!(error instanceof MalformedRecordError)) throw error;
  return { name: error.name, reason: error.reason, path: error.path, message: error.message };
}

const runs = { numRuns: 1500 };

describe('validate: structural validation agrees with unmarshall (property)', () => {
  it('isValidAttributeMap is false exactly when unmarshall throws', () => {
    let valid = 0;
    let invalid = 0;
    fc.assert(
      fc.property(attributeMapArbitrary(), (map) => {
        const error = thrown(() => unmarshall(map as AttributeMap));
        if (error !== undefined) expect(error).toBeInstanceOf(InvalidAttributeValueError);
        expect(isValidAttributeMap(map)).toBe(error === undefined);
        if (error === undefined) valid++;
        else invalid++;
      }),
      runs,
    );
    // Both sides of the property were exercised, not just one.
    expect(valid).toBeGreaterThan(runs.numRuns / 10);
    expect(invalid).toBeGreaterThan(runs.numRuns / 10);
  });

  it('parse with validate throws iff the lazy getters throw, with the same reason, path and message', () => {
    fc.assert(
      fc.property(attributeMapArbitrary(), (image) => {
        const input = record(image);
        const lazy = parseStreamRecord(input);
        const fromGetter = observed(thrown(() => lazy.newImage));
        const fromValidate = observed(thrown(() => parseStreamRecord(input, { validate: true })));
        expect(fromValidate).toStrictEqual(fromGetter);
        // eager (full unmarshall at parse time) is the reference the pipeline used to default to.
        expect(observed(thrown(() => parseStreamRecord(input, { eager: true })))).toStrictEqual(fromGetter);
      }),
      runs,
    );
  });

  it('accepts every map util-dynamodb marshall produces, in both wire shapes, without unmarshalling', () => {
    fc.assert(
      fc.property(itemArbitrary({ exact: true }), fc.boolean(), (item, lambda) => {
        const sdk = sdkMarshall(item) as Record<string, unknown>;
        const map = lambda ? JSON.parse(JSON.stringify(sdk, (_k, v) => toBase64(v))) : sdk;
        expect(isValidAttributeMap(map)).toBe(true);
        const parsed = parseStreamRecord(record(map), { validate: true });
        expect(unmarshall(map)).toStrictEqual(parsed.newImage);
      }),
      { numRuns: 300 },
    );
  });
});

function toBase64(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  // JSON.stringify hands typed arrays to the replacer only after toJSON; Buffer has one.
  if (value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'Buffer')
    return Buffer.from((value as { data: number[] }).data).toString('base64');
  return value;
}

describe('validate option', () => {
  it('reports the first bad value with the getter’s reason and path', () => {
    const error = thrown(() =>
      parseStreamRecord(record({ a: { M: { b: { L: [{ S: 'x' }, { N: '1x' }] } } } }), { validate: true }),
    );
    expect(error).toBeInstanceOf(MalformedRecordError);
    expect(error).toMatchObject({
      reason: 'invalid-number',
      path: 'dynamodb.NewImage.a.b[1]',
      eventID: 'e1',
    });
    const keys = thrown(() =>
      parseStreamRecord(
        { ...record(undefined), dynamodb: { Keys: { pk: { B: 'Y' } }, SequenceNumber: '1' } },
        {
          validate: true,
        },
      ),
    );
    expect(keys).toMatchObject({
      reason: 'invalid-attribute-value',
      path: 'dynamodb.Keys.pk',
      sequenceNumber: '1',
    });
  });

  it('leaves valid images lazy: nothing is unmarshalled until read', () => {
    const image = { a: { N: '1' } };
    const parsed = parseStreamRecord(record(image), { validate: true });
    // A later mutation of the source shows through: the image was not converted at parse time.
    image.a.N = '2';
    expect(parsed.newImage).toStrictEqual({ a: 2 });
  });

  it('rejects a non-boolean', () => {
    expect(() => parseStreamRecord(record(undefined), { validate: 'yes' as never })).toThrow(
      InvalidOptionsError,
    );
  });

  it('isBase64 agrees with the decoder on edge cases', () => {
    for (const [textValue, ok] of [
      ['', true],
      ['YQ', true],
      ['YQ==', true],
      ['YWI', true],
      ['YWI=', true],
      ['-_8', true],
      ['Y', false],
      ['YQ=', false],
      ['YQ===', false],
      ['YW J', false],
      ['YWJ\u0100', false],
    ] as const) {
      expect(isBase64(textValue), textValue).toBe(ok);
      expect(thrown(() => unmarshall({ b: { B: textValue } })) === undefined, textValue).toBe(ok);
    }
  });
});
