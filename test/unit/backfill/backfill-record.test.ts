import { marshall as sdkMarshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backfillSequenceNumber,
  fullExportRecord,
  incrementalRecord,
  parseLine,
} from '../../../src/backfill/backfill-record.js';
import { InvalidExportLineError } from '../../../src/backfill/errors.js';
import { toJsonAttributeMap } from '../../../src/records/convert.js';
import { MalformedRecordError } from '../../../src/records/errors.js';
import { createRecordParser, marshall, unmarshall } from '../../../src/records/index.js';
import type { AttributeMap } from '../../../src/records/types.js';
import { itemArbitrary } from '../records/arbitraries.js';

const origin = { source: 'backfill', from: 'export', snapshotTime: 1_767_323_045_000 } as const;
const parse = createRecordParser({ origin, validate: true });
const context = { tableArn: 'arn:aws:dynamodb:eu-west-1:123456789012:table/orders', region: 'eu-west-1' };
const place = { eventID: 'data/a.json.gz#7', sequenceNumber: backfillSequenceNumber(2, 7) };

describe('a full export line', () => {
  it('export → record → unmarshall is lossless for wide items (38-digit numbers, binary, sets, nesting)', () => {
    fc.assert(
      fc.property(itemArbitrary({ exact: true }), fc.string({ minLength: 1, maxLength: 20 }), (item, pk) => {
        const image = toJsonAttributeMap(sdkMarshall({ ...item, pk }));
        // What a data file holds: the JSON text of one line, read back.
        const text = JSON.stringify({ Item: image });
        const record = parse(
          fullExportRecord(parseLine(text, 'k', 1), ['pk'], 1_767_323_045, place, context),
        );
        expect(record.kind).toBe('insert');
        expect(record.origin).toEqual(origin);
        expect(record.raw.dynamodb.NewImage).toStrictEqual(image);
        expect(marshall(record.newImage!)).toStrictEqual(marshall(unmarshall(image)));
        expect(record.keys).toEqual({ pk });
      }),
      { numRuns: 300 },
    );
  });

  it('carries the snapshot time, the table and the place it was read from', () => {
    const record = parse(
      fullExportRecord(
        { Item: { pk: { S: 'a' }, sk: { N: '1' } } },
        ['pk', 'sk'],
        1_767_323_045.5,
        place,
        context,
      ),
    );
    expect(record).toMatchObject({
      eventID: 'data/a.json.gz#7',
      sequenceNumber: '1000002000000000007',
      approximateCreationTime: 1_767_323_045.5,
      tableName: 'orders',
      awsRegion: 'eu-west-1',
    });
    expect(record.keys).toEqual({ pk: 'a', sk: 1 });
  });

  it('an item without its key attribute, or no Item at all, is a malformed record (dead-lettered by the pipeline)', () => {
    for (const line of [{ Item: { other: { S: 'x' } } }, { NotItem: 1 }]) {
      expect(() => parse(fullExportRecord(line, ['pk'], 1_767_323_045, place, context))).toThrow(
        expect.objectContaining({
          name: 'MalformedRecordError',
          reason: 'missing-keys',
          eventID: place.eventID,
        }),
      );
    }
    void MalformedRecordError;
  });

  it('a line that is not one JSON object is an InvalidExportLineError naming file and line, not the content', () => {
    for (const text of ['{"Item": {', '[1,2]', 'null', '"secret"']) {
      const error = (() => {
        try {
          parseLine(text, 'AWSDynamoDB/x/data/f.json.gz', 12);
        } catch (e) {
          return e as InvalidExportLineError;
        }
      })();
      expect(error).toBeInstanceOf(InvalidExportLineError);
      expect(error).toMatchObject({ key: 'AWSDynamoDB/x/data/f.json.gz', line: 12 });
      expect(error!.message).not.toContain('secret');
    }
  });
});

describe('an incremental export line', () => {
  const keys: AttributeMap = { pk: { S: 'a' } };
  const before: AttributeMap = { pk: { S: 'a' }, v: { N: '1' } };
  const after: AttributeMap = { pk: { S: 'a' }, v: { N: '2' } };
  const meta = { Metadata: { WriteTimestampMicros: { N: '1767323045123456' } } };

  it('NEW_AND_OLD_IMAGES: new image alone an insert, both a modify, old alone or none a user delete, at the write time', () => {
    const cases = [
      [{ ...meta, Keys: keys, NewImage: after }, 'insert'],
      [{ ...meta, Keys: keys, OldImage: before, NewImage: after }, 'modify'],
      [{ ...meta, Keys: keys, OldImage: before }, 'user-delete'],
      [{ ...meta, Keys: keys }, 'user-delete'],
    ] as const;
    for (const [line, kind] of cases) {
      const record = parse(incrementalRecord(line, 'NEW_AND_OLD_IMAGES', 1, place, context));
      expect(record.kind).toBe(kind);
      expect(record.approximateCreationTime).toBe(1_767_323_045.123);
      expect(record.keys).toEqual({ pk: 'a' });
      expect(record.raw.dynamodb.NewImage).toEqual('NewImage' in line ? after : undefined);
      expect(record.raw.dynamodb.OldImage).toEqual('OldImage' in line ? before : undefined);
    }
  });

  it('NEW_IMAGE: a new image is a modify without an old one (an export cannot tell new from changed)', () => {
    expect(
      parse(incrementalRecord({ ...meta, Keys: keys, NewImage: after }, 'NEW_IMAGE', 1, place, context)).kind,
    ).toBe('modify');
  });

  it('without a write time the snapshot time stands in', () => {
    const record = parse(
      incrementalRecord({ Keys: keys, NewImage: after }, 'NEW_AND_OLD_IMAGES', 1_767_000_000, place, context),
    );
    expect(record.approximateCreationTime).toBe(1_767_000_000);
  });
});

describe('backfill sequence numbers', () => {
  it('order alike as text and as numbers, by source then position, and are what a stream may carry', () => {
    const position = fc.tuple(
      fc.integer({ min: 0, max: 999_999 }),
      fc.integer({ min: 0, max: 999_999_999_999 }),
    );
    fc.assert(
      fc.property(position, position, ([s1, p1], [s2, p2]) => {
        const a = backfillSequenceNumber(s1, p1);
        const b = backfillSequenceNumber(s2, p2);
        expect(a).toMatch(/^\d{19}$/);
        const byPosition = s1 === s2 ? Math.sign(p1 - p2) : Math.sign(s1 - s2);
        expect(Math.sign(a.localeCompare(b))).toBe(byPosition);
        expect(Math.sign(Number(BigInt(a) - BigInt(b)))).toBe(byPosition);
      }),
    );
  });
});

describe('hostile lines', () => {
  const PROTOTYPE = Object.getOwnPropertyNames(Object.prototype).sort();
  const hostile = fc.oneof(
    fc.string(),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc
      .record(
        {
          Item: fc.oneof(fc.jsonValue(), fc.constant({ __proto__: { S: 'x' } })),
          Keys: fc.jsonValue(),
          NewImage: fc.jsonValue(),
          OldImage: fc.jsonValue(),
          Metadata: fc.oneof(fc.jsonValue(), fc.constant({ WriteTimestampMicros: { N: '1e400' } })),
        },
        { requiredKeys: [] },
      )
      .map((v) => JSON.stringify(v)),
    fc.constantFrom('{"__proto__":{"polluted":1}}', '{"Item":{"__proto__":{"S":"a"}}}', '[]', 'null', '1'),
  );

  it('give an InvalidExportLineError or a record, never a raw error, never touching Object.prototype', () => {
    fc.assert(
      fc.property(
        hostile,
        fc.constantFrom(['pk'], ['__proto__'], ['pk', 'constructor']),
        (text, keyAttributes) => {
          let value: Record<string, unknown>;
          try {
            value = parseLine(text, 'data/a.json.gz', 3);
          } catch (error) {
            expect(error).toBeInstanceOf(InvalidExportLineError);
            return;
          }
          const full = fullExportRecord(value, keyAttributes, 1, place, context);
          const incremental = incrementalRecord(value, 'NEW_AND_OLD_IMAGES', 1, place, context);
          for (const r of [full, incremental]) {
            expect(r.eventID).toBe(place.eventID);
            if (r.dynamodb.Keys !== undefined)
              expect(Object.getPrototypeOf(r.dynamodb.Keys)).toBe(Object.prototype);
          }
          expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTOTYPE);
          expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        },
      ),
      { numRuns: 500, interruptAfterTimeLimit: 20_000 },
    );
  });

  it("a key attribute named `__proto__` is the item's attribute, in Keys as an own property", () => {
    const value = parseLine('{"Item":{"__proto__":{"S":"a"},"n":{"N":"1"}}}', 'data/a.json.gz', 1);
    const r = fullExportRecord(value, ['__proto__'], 1, place, context);
    expect(Object.getOwnPropertyDescriptor(r.dynamodb.Keys, '__proto__')?.value).toEqual({ S: 'a' });
    expect(Object.getPrototypeOf(r.dynamodb.Keys)).toBe(Object.prototype);
  });
});
