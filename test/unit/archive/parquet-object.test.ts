import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ArchivePartition,
  type ArchiveRow,
  encodeObject,
  parquetObjectKey,
  parseArchiveKey,
  toArchiveRow,
} from '../../../src/archive/format.js';
import { decodeArchiveBody } from '../../../src/archive/object-decoder.js';
import { DEFAULT_KEY_ATTRIBUTES, type ParquetSettings } from '../../../src/archive/parquet-columns.js';
import { decodeParquetObject, encodeParquetObject } from '../../../src/archive/parquet-object.js';
import { typedColumnsFromSchema } from '../../../src/archive/typed-columns.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { parseStreamEvent } from '../../../src/records/index.js';
import type { AttributeMap, AttributeValue } from '../../../src/records/types.js';
import { ArchiveFormatError } from '../../../src/sinks/index.js';
import { sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { kinesisCopies } from '../../support/kinesis-copies.js';
import { attributeValue, number38 } from './attribute-values.js';

const NDJSON = { keyAttributes: DEFAULT_KEY_ATTRIBUTES, typedColumns: {} } satisfies ParquetSettings;

const value = attributeValue;
const image = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), value, { maxKeys: 6 });
const keyValue: fc.Arbitrary<AttributeValue> = fc.oneof(
  fc.string({ minLength: 1 }).map((S) => ({ S })),
  number38.map((N) => ({ N })),
  fc.uint8Array({ minLength: 1, maxLength: 20 }).map((b) => ({ B: Buffer.from(b).toString('base64') })),
);
const keys = fc.oneof(
  fc.record({ pk: keyValue }),
  fc.record({ pk: keyValue, sk: keyValue }),
  fc.record({ id: keyValue }),
  fc.record({ tenantKey: keyValue, at: keyValue }),
) as fc.Arbitrary<AttributeMap>;
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

/** ArchiveRows with every optional field present or absent, fields in toArchiveRow's order. */
const row: fc.Arbitrary<ArchiveRow> = fc
  .record({
    eventID: fc.string({ minLength: 1, maxLength: 40 }),
    sequenceNumber: fc.bigInt({ min: 1n, max: 10n ** 56n }).map(String),
    shard: fc.constantFrom('shardId-00000001700000000000-abc123', 'stream-2026-01-15T00:00:00.000'),
    eventName: fc.constantFrom('INSERT', 'MODIFY', 'REMOVE') as fc.Arbitrary<ArchiveRow['eventName']>,
    kind: fc.constantFrom('insert', 'modify', 'user-delete', 'ttl-delete') as fc.Arbitrary<
      ArchiveRow['kind']
    >,
    approximateCreationDateTime: fc.integer({ min: 946_684_800, max: 4_102_444_799 }),
    table: fc.constantFrom('orders', 'a.b-c_d'),
    keys,
    ttlAttribute: fc.constantFrom('expiresAt', 'ttl'),
    ttl: fc.oneof(
      fc.constant(null),
      fc.integer({ min: 0, max: 4_102_444_799 }).map(String),
      fc.constant('1700000000123'),
      fc.string(),
    ),
    tenant: optional(fc.string({ minLength: 1 })),
    oldImage: optional(image),
    newImage: optional(image),
    eventSourceARN: optional(fc.constant('arn:aws:dynamodb:eu-west-1:123456789012:table/orders/stream/x')),
    awsRegion: optional(fc.constant('eu-west-1')),
    userIdentity: optional(
      fc.record({ type: fc.constant('Service'), principalId: fc.constant('dynamodb.amazonaws.com') }),
    ),
    sizeBytes: optional(fc.nat()),
    streamViewType: optional(fc.constant('NEW_AND_OLD_IMAGES' as const)),
    eventVersion: optional(fc.constant('1.1')),
    eventSource: optional(fc.constant('aws:dynamodb')),
    kinesis: optional(
      fc.record({
        partitionKey: fc.stringMatching(/^[0-9a-f]{32}$/),
        creationTime: fc.integer({ min: 946_684_800_000, max: 4_102_444_799_000 }),
        precision: fc.constantFrom('MILLISECOND', 'MICROSECOND') as fc.Arbitrary<
          'MILLISECOND' | 'MICROSECOND'
        >,
      }),
    ),
  })
  .map((r) => {
    // Absent optional fields are left out, not set to undefined, as toArchiveRow writes them.
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(r)) if (x !== undefined) out[k] = x;
    return out as unknown as ArchiveRow;
  });

describe('Parquet archive objects', () => {
  it('rebuild every ArchiveRow exactly: same fields, same serialization', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 12 }), async (rows) => {
        const { body } = encodeParquetObject(rows, NDJSON);
        const back = await decodeParquetObject(body, 'k.parquet');
        expect(back.rows).toEqual(rows);
        // Field order too: a row read from Parquet serializes as the NDJSON line it came from.
        expect(back.rows.map((r) => JSON.stringify(r))).toEqual(rows.map((r) => JSON.stringify(r)));
        expect(back.settings).toEqual(NDJSON);
      }),
      { numRuns: 60 },
    );
  });

  it('rebuild the rows of Kinesis records and of the sinks, as NDJSON does', async () => {
    const ttl = sampleTtlDeletes(5, { table: 'orders' });
    const kinesis = parseStreamEvent({ Records: kinesisCopies(ttl, 'orders') }, { source: 'kinesis' });
    const partition: ArchivePartition = { table: 'orders', dt: '2026-01-15', hour: '10', shard: 'stream-x' };
    const rows = [...ttl, ...kinesis].map((r) => toArchiveRow(r, partition, 'expiresAt', 'acme'));
    expect(rows.some((r) => r.kinesis !== undefined)).toBe(true);
    const parquet = encodeParquetObject(rows, NDJSON).body;
    const ndjson = encodeObject(rows.map((r) => `${JSON.stringify(r)}\n`)).body;
    expect(
      await decodeArchiveBody(
        parquet,
        'x/table=orders/dt=2026-01-15/hour=10/stream-x-1-2-0123456789ab.parquet',
      ),
    ).toEqual(await decodeArchiveBody(ndjson, 'x/table=orders/dt=2026-01-15/hour=10/stream-x/1-2.ndjson.gz'));
  });

  it('are the same bytes for the same rows (compaction keys hash the body)', () => {
    const rows = [{ ...baseRow(), newImage: { pk: { S: 'a' }, n: { N: '1.5' } } }];
    const settings: ParquetSettings = { ...NDJSON, typedColumns: { n: 'number' } };
    expect(encodeParquetObject(rows, settings).sha256).toBe(encodeParquetObject(rows, settings).sha256);
  });

  it('write the query columns: pk/sk as text, padded sequence numbers, timestamps, TTL only when epoch seconds', async () => {
    const rows: ArchiveRow[] = [
      {
        ...baseRow(),
        keys: { pk: { S: 'acme#1' }, sk: { N: '1.50' } },
        oldImage: { expiresAt: { N: '1700000000' } },
        ttl: '1700000000',
      },
      {
        ...baseRow(),
        keys: { id: { B: 'AQI=' } },
        oldImage: { expiresAt: { N: '1700000000123' } },
        ttl: '1700000000123',
      },
      {
        ...baseRow(),
        keys: { pk: { N: '7' } },
        oldImage: { expiresAt: { S: '1700000000' } },
        ttl: '1700000000',
      },
    ];
    const { body } = encodeParquetObject(rows, NDJSON);
    const file = body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
    const read = await parquetReadObjects({
      file,
      columns: ['pk', 'sk', 'sequence_number', 'approximate_creation_time', 'ttl', 'ttl_text'],
      compressors: { GZIP: (b: Uint8Array) => new Uint8Array(gunzipSync(b)) },
    });
    expect(read.map((r) => [r.pk, r.sk, r.ttl?.toISOString() ?? null, r.ttl_text])).toEqual([
      ['acme#1', '1.5', '2023-11-14T22:13:20.000Z', '1700000000'],
      ['AQI=', null, null, '1700000000123'],
      ['7', null, null, '1700000000'],
    ]);
    expect(read[0]?.sequence_number).toBe('0'.repeat(19) + baseRow().sequenceNumber);
    expect((read[0]?.approximate_creation_time as Date | undefined)?.toISOString()).toBe(
      '2026-01-15T10:00:00.000Z',
    );
  });

  it('add typed item columns; a number column is DECIMAL(38, s) only when every value fits exactly', () => {
    const big = '12345678901234567890123456789012345678';
    const at = (n: string, extra: AttributeMap = {}) => ({
      ...baseRow(),
      newImage: { pk: { S: 'a' }, amount: { N: n }, status: { S: 'paid' }, ok: { BOOL: true }, ...extra },
    });
    const typed = { amount: 'number', status: 'string', ok: 'boolean', missing: 'number' } as const;
    const columns = (rows: ArchiveRow[]) => {
      const { body } = encodeParquetObject(rows, { ...NDJSON, typedColumns: typed });
      const schema = parquetMetadata(
        body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer,
      ).schema;
      return Object.fromEntries(
        schema
          .filter((e) => e.name.startsWith('item_'))
          .map((e) => [e.name, [e.type, e.converted_type, e.precision, e.scale]]),
      );
    };
    expect(columns([at(big), at('-0.25')])).toEqual({
      item_status: ['BYTE_ARRAY', 'UTF8', undefined, undefined],
      item_ok: ['BOOLEAN', undefined, undefined, undefined],
      item_missing: ['FIXED_LEN_BYTE_ARRAY', 'DECIMAL', 38, 0],
    });
    // 36 integer digits and a scale of 2 fit; the same with a 38-digit integer does not.
    expect(columns([at('123456789012345678901234567890123456'), at('0.25')]).item_amount).toEqual([
      'FIXED_LEN_BYTE_ARRAY',
      'DECIMAL',
      38,
      2,
    ]);
    expect(columns([at(big)]).item_amount).toEqual(['FIXED_LEN_BYTE_ARRAY', 'DECIMAL', 38, 0]);
    expect(columns([at('1E+2'), at('1.5E-3')]).item_amount).toEqual([
      'FIXED_LEN_BYTE_ARRAY',
      'DECIMAL',
      38,
      4,
    ]);
  });

  it('refuse a body that is not a tidewater Parquet object with ArchiveFormatError', async () => {
    await expect(decodeParquetObject(Buffer.from('PAR1 nothing PAR1'), 'k.parquet')).rejects.toThrow(
      ArchiveFormatError,
    );
    const ndjson = encodeObject(['{}\n']).body;
    await expect(
      decodeArchiveBody(ndjson, 'a/parquet/table=t/dt=2026-01-15/hour=10/s-1-2-0123456789ab.parquet'),
    ).rejects.toThrow(ArchiveFormatError);
  });
});

describe('Parquet keys', () => {
  it('parse back to the partition, shard and sequence range whatever the shard id holds', () => {
    const shard = fc.stringMatching(/^[A-Za-z0-9._=-]{1,30}$/);
    fc.assert(
      fc.property(
        shard,
        fc.option(fc.stringMatching(/^[A-Za-z0-9._!-]{1,20}$/), { nil: undefined }),
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        (s, tenant, a, b) => {
          const p: ArchivePartition = { table: 'orders', dt: '2026-01-15', hour: '10', shard: s };
          if (tenant !== undefined) p.tenant = tenant;
          const key = parquetObjectKey('archive', p, String(a), String(b), '0123456789ab');
          expect(key.endsWith('.parquet')).toBe(true);
          // Under the archive's Parquet root, apart from its NDJSON objects.
          expect(key.startsWith('archive/parquet/table=orders/dt=2026-01-15/hour=10/')).toBe(true);
          // Every folder under the root is a key=value partition.
          expect(
            key
              .split('/')
              .slice(2, -1)
              .every((segment) => segment.includes('=')),
          ).toBe(true);
          expect(parseArchiveKey(key)).toEqual({
            key,
            hourPrefix: 'archive/table=orders/dt=2026-01-15/hour=10/',
            table: 'orders',
            dt: '2026-01-15',
            hour: '10',
            shard: s,
            first: String(a),
            last: String(b),
            tag: '0123456789ab',
            format: 'parquet',
            ...(tenant === undefined ? {} : { tenant }),
          });
        },
      ),
    );
  });
});

describe('typedColumnsFromSchema', () => {
  it('reads the top-level strings, booleans and numbers of a schema that speaks Standard JSON Schema', () => {
    const schema = z.object({
      pk: z.string(),
      paid: z.boolean(),
      amount: z.number(),
      count: z.number().int(),
      tags: z.array(z.string()),
      address: z.object({ city: z.string() }),
    });
    expect(typedColumnsFromSchema(schema)).toEqual({
      pk: 'string',
      paid: 'boolean',
      amount: 'number',
      count: 'number',
    });
  });

  it('refuses a schema that does not describe itself: typedColumns is the way then', () => {
    const schema = v.object({ pk: v.string() });
    expect(() => typedColumnsFromSchema(schema as never)).toThrow(InvalidOptionsError);
    expect(() => typedColumnsFromSchema(schema as never)).toThrow(/give 'typedColumns'/);
  });
});

function baseRow(): ArchiveRow {
  return {
    eventID: 'ev-1',
    sequenceNumber: '111000000000000000001',
    shard: 'shardId-1',
    eventName: 'REMOVE',
    kind: 'ttl-delete',
    approximateCreationDateTime: Date.parse('2026-01-15T10:00:00Z') / 1000,
    table: 'orders',
    keys: { pk: { S: 'a' } },
    ttlAttribute: 'expiresAt',
    ttl: null,
  };
}
