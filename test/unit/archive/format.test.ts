import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeObject,
  objectKey,
  objectTag,
  parseArchiveKey,
  rowToLambdaRecord,
  shardSegment,
} from '../../../src/archive/format.js';
import { planArchiveObjects } from '../../../src/archive/objects.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { MalformedRecordError, parseStreamRecord } from '../../../src/records/index.js';
import type { LambdaStreamRecord } from '../../../src/records/types.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { ArchiveFormatError, ArchiveKeyError } from '../../../src/sinks/index.js';
import { sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { attributeValue } from './attribute-values.js';

/** The documented tag, computed here independently of the code under test. */
const tagOf = (eventID: string) => createHash('sha256').update(eventID).digest('hex').slice(0, 12);

const layout = { prefix: 'p', ttlAttribute: 'ttl', maxObjectBytes: 1 << 24, table: undefined };

const value = attributeValue;

describe('archive rows', () => {
  it('round-trip any record exactly: raw in, same raw out', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), value, { maxKeys: 6 }),
        fc.integer({ min: 1_000_000_000, max: 4_000_000_000 }),
        (image, created) => {
          const raw: LambdaStreamRecord = {
            eventID: 'e1',
            eventName: 'REMOVE',
            eventSourceARN: 'arn:aws:dynamodb:eu-west-1:1:table/T/stream/label',
            awsRegion: 'eu-west-1',
            userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' },
            dynamodb: {
              ApproximateCreationDateTime: created,
              Keys: { pk: { S: 'k' } },
              OldImage: { pk: { S: 'k' }, ...image },
              SequenceNumber: '123456789012345678901',
              StreamViewType: 'OLD_IMAGE',
            },
          };
          const { objects } = planArchiveObjects([parseStreamRecord(raw)], layout);
          const rows = decodeObject(objects[0]?.body as Buffer, 'k');
          expect(rowToLambdaRecord(rows[0] as never)).toEqual(raw);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('key segments: shard id when known, else the stream label; keys parse back', () => {
    const [lambda] = sampleTtlDeletes(1);
    const [polled] = sampleTtlDeletes(1, { shardId: 'shardId-0001' });
    expect(shardSegment(lambda as never)).toBe('stream-2026-01-01T00_00_00.000');
    expect(shardSegment(polled as never)).toBe('shardId-0001');
    const key = objectKey('a/b', { table: 't', dt: '2026-01-15', hour: '10', shard: 's' }, '1', '9');
    expect(key).toBe('a/b/table=t/dt=2026-01-15/hour=10/s/1-9.ndjson.gz');
    expect(parseArchiveKey(key)).toEqual({
      key,
      hourPrefix: 'a/b/table=t/dt=2026-01-15/hour=10/',
      table: 't',
      dt: '2026-01-15',
      hour: '10',
      shard: 's',
      first: '1',
      last: '9',
      format: 'ndjson',
    });
  });

  it('keys with a tag parse back, and keys without one (written before tags) still do', () => {
    const partition = { table: 't', dt: '2026-01-15', hour: '10', shard: 'stream-label' };
    const tagged = objectKey('a', partition, '1', '9', '0123456789ab');
    expect(tagged).toBe('a/table=t/dt=2026-01-15/hour=10/stream-label/1-9-0123456789ab.ndjson.gz');
    const hourPrefix = 'a/table=t/dt=2026-01-15/hour=10/';
    const parts = {
      hourPrefix,
      table: 't',
      dt: '2026-01-15',
      hour: '10',
      shard: 'stream-label',
      format: 'ndjson',
    };
    expect(parseArchiveKey(tagged)).toEqual({
      key: tagged,
      ...parts,
      first: '1',
      last: '9',
      tag: '0123456789ab',
    });
    const untagged = `${hourPrefix}stream-label/1-9.ndjson.gz`;
    expect(parseArchiveKey(untagged)).toEqual({ key: untagged, ...parts, first: '1', last: '9' });
    // Not a tag tidewater writes: not an archive object.
    expect(parseArchiveKey(`${hourPrefix}stream-label/1-9-XYZ.ndjson.gz`)).toBeUndefined();
    expect(parseArchiveKey(`${hourPrefix}stream-label/1-9-0123456789abc.ndjson.gz`)).toBeUndefined();
  });

  it('a known shard id keeps the documented key exactly: no tag', () => {
    const batch = sampleTtlDeletes(4, { shardId: 'shardId-00000001700000000000-abcdef12' });
    const { objects } = planArchiveObjects(batch, layout);
    expect(objects.map((o) => o.key)).toEqual([
      `p/table=archive-sample/dt=2026-01-15/hour=10/shardId-00000001700000000000-abcdef12/${batch[0]?.sequenceNumber}-${batch[3]?.sequenceNumber}.ndjson.gz`,
    ]);
    expect(objectTag('shardId-0001', 'any')).toBeUndefined();
  });

  it('under the stream label, two shards with equal sequence ranges get different keys; a redelivery the same key', () => {
    const sequences = sampleTtlDeletes(5).map((r) => r.sequenceNumber);
    // Lambda batches of two shards: no shard id, the same sequence numbers, their own eventIDs.
    const batchOf = (eventIDs: readonly string[]) =>
      sampleTtlDeletes(5).map((r, i) => parseStreamRecord({ ...r.raw, eventID: eventIDs[i] as string }));
    const eventIDs = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 40 }), {
      minLength: 5,
      maxLength: 5,
    });
    fc.assert(
      fc.property(eventIDs, eventIDs, (idsA, idsB) => {
        fc.pre(idsA[0] !== idsB[0]);
        const [a] = planArchiveObjects(batchOf(idsA), layout).objects;
        const [b] = planArchiveObjects(batchOf(idsB), layout).objects;
        const [again] = planArchiveObjects(batchOf(idsA), layout).objects;
        expect(a?.key).toBe(
          `p/table=archive-sample/dt=2026-01-15/hour=10/stream-2026-01-01T00_00_00.000/${sequences[0]}-${sequences[4]}-${tagOf(idsA[0] as string)}.ndjson.gz`,
        );
        expect(b?.key).not.toBe(a?.key);
        expect(parseArchiveKey(b?.key as string)).toMatchObject({ first: sequences[0], last: sequences[4] });
        expect(again?.key).toBe(a?.key);
        expect(again?.body.equals(a?.body as Buffer)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('each object cut from a batch takes the tag of its own first record', () => {
    const batch = sampleTtlDeletes(40);
    const { objects } = planArchiveObjects(batch, { ...layout, maxObjectBytes: 4_000 });
    expect(objects.length).toBeGreaterThan(2);
    for (const object of objects) {
      expect(parseArchiveKey(object.key)?.tag).toBe(tagOf(object.records[0]?.eventID as string));
    }
    expect(new Set(objects.map((o) => parseArchiveKey(o.key)?.tag)).size).toBe(objects.length);
  });

  it('a record without table or creation time fails alone with ArchiveKeyError', () => {
    const good = sampleTtlDeletes(2);
    const orphan = parseStreamRecord({
      ...(good[0]?.raw as object),
      eventSourceARN: undefined,
      dynamodb: { ...good[0]?.raw.dynamodb, SequenceNumber: '5' },
    });
    const { objects, failed } = planArchiveObjects([...good, orphan], layout);
    expect(objects).toHaveLength(1);
    expect(failed.map((f) => f.sequenceNumber)).toEqual(['5']);
    expect(failed[0]?.error).toBeInstanceOf(ArchiveKeyError);
  });

  it('a record without a creation time fails alone as malformed (DynamoDB stamps every record)', () => {
    const good = sampleTtlDeletes(2);
    const raw = good[0]!.raw;
    const { ApproximateCreationDateTime: _, ...undated } = raw.dynamodb;
    const orphan = parseStreamRecord({ ...raw, dynamodb: { ...undated, SequenceNumber: '5' } });
    const { objects, failed } = planArchiveObjects([...good, orphan], layout);
    expect(objects.flatMap((o) => o.records)).toEqual(good);
    expect(failed).toEqual([{ sequenceNumber: '5', error: expect.any(MalformedRecordError) }]);
    expect(failed[0]?.error).toMatchObject({
      reason: 'invalid-creation-time',
      path: 'dynamodb.ApproximateCreationDateTime',
    });
  });

  it('a record too deep to serialize (it skipped the pipeline check) fails alone: no RangeError for its batch', () => {
    const good = sampleTtlDeletes(3);
    let deep: unknown = { S: 'x' };
    for (let i = 0; i < 50_000; i++) deep = { L: [deep] };
    const raw = good[1]!.raw;
    const poison = parseStreamRecord({
      ...raw,
      dynamodb: { ...raw.dynamodb, OldImage: { ...raw.dynamodb.OldImage, deep } },
    });
    const { objects, failed } = planArchiveObjects([good[0]!, poison, good[2]!], layout);
    expect(objects.flatMap((o) => o.records)).toEqual([good[0], good[2]]);
    expect(failed).toEqual([
      { sequenceNumber: poison.sequenceNumber, error: expect.any(MalformedRecordError) },
    ]);
  });

  it('decoding rejects what tidewater did not write', () => {
    expect(() => decodeObject(Buffer.from('plain'), 'k')).toThrow(ArchiveFormatError);
  });
});

describe('S3ArchiveSink options', () => {
  it('fail loudly on typos and bad values', () => {
    expect(() => new S3ArchiveSink({ bucket: 'b', storageclass: 'GLACIER' } as never)).toThrow(
      InvalidOptionsError,
    );
    expect(() => new S3ArchiveSink({ bucket: 'b', storageClass: 'COLD' as never })).toThrow(/storageClass/);
    expect(() => new S3ArchiveSink({ bucket: 'b', sse: 'KMS' as never })).toThrow(/sse/);
    expect(
      () => new S3ArchiveSink({ bucket: 'b', sse: { kmsKeyId: 'k', bucketKey: true } as never }),
    ).toThrow(InvalidOptionsError);
    expect(() => new S3ArchiveSink({} as never)).toThrow(/bucket/);
    expect(
      () => new S3ArchiveSink({ bucket: 'b', client: { send: () => undefined } as never, maxAttempts: 3 }),
    ).toThrow(/maxAttempts/);
  });
});
