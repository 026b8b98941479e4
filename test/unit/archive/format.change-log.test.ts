import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeObject, rowToLambdaRecord } from '../../../src/archive/format.js';
import { planArchiveObjects } from '../../../src/archive/objects.js';
import { parseStreamEvent, parseStreamRecord } from '../../../src/records/index.js';
import type { LambdaStreamRecord } from '../../../src/records/types.js';
import { sampleChangeRecords } from '../../../src/sinks/sample-records.js';

const layout = { prefix: 'archive/changes', ttlAttribute: 'ttl', maxObjectBytes: 1 << 24, table: undefined };

const rowsOf = (raws: LambdaStreamRecord[]) =>
  planArchiveObjects(parseStreamEvent({ Records: raws }), layout).objects.flatMap((o) =>
    decodeObject(o.body, o.key),
  );

describe('change-log rows', () => {
  it('an insert keeps its new image only, a modify both, a delete its old image; each rebuilds its record', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.nat(10_000), (count, start) => {
        const raws = sampleChangeRecords(count, { start });
        const rows = rowsOf(raws);
        expect(rows.map((r) => r.eventID)).toEqual(raws.map((r) => r.eventID));
        for (const [i, row] of rows.entries()) {
          const raw = raws[i] as LambdaStreamRecord;
          expect(row.kind).toBe(parseStreamRecord(raw).kind);
          expect(row.newImage).toEqual(raw.eventName === 'REMOVE' ? undefined : raw.dynamodb.NewImage);
          expect(row.oldImage).toEqual(raw.eventName === 'INSERT' ? undefined : raw.dynamodb.OldImage);
          expect(rowToLambdaRecord(row)).toEqual(raw);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('carries the TTL the change left: the new image of a modify, the old image of a delete', () => {
    const [modify, remove] = sampleChangeRecords(40).filter((r) => r.eventName !== 'INSERT');
    const moved: LambdaStreamRecord = {
      ...(modify as LambdaStreamRecord),
      dynamodb: {
        ...modify!.dynamodb,
        OldImage: { ...modify!.dynamodb.OldImage, ttl: { N: '1700000000' } },
        NewImage: { ...modify!.dynamodb.NewImage, ttl: { N: '1800000000' } },
      },
    };
    const cleared: LambdaStreamRecord = {
      ...moved,
      eventID: 'cleared',
      dynamodb: { ...moved.dynamodb, NewImage: { pk: moved.dynamodb.Keys.pk!, sk: moved.dynamodb.Keys.sk! } },
    };
    const [movedRow, clearedRow, removeRow] = rowsOf([moved, cleared, remove as LambdaStreamRecord]);
    expect(movedRow?.ttl).toBe('1800000000');
    // The new image has no TTL: the item no longer expires, and the row falls back to the old one's.
    expect(clearedRow?.ttl).toBe('1700000000');
    expect(removeRow?.ttl).toBe(remove?.dynamodb.OldImage?.ttl?.N);
  });
});
