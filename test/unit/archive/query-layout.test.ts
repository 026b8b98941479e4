// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Athena's projection placeholders, not template literals
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ArchivePartition,
  objectKey,
  parquetObjectKey,
  parseArchiveKey,
  partitionPrefix,
  partitionTime,
} from '../../../src/archive/format.js';
import { tenantSegment } from '../../../src/archive/partition.js';
import {
  dedupViewSql,
  NDJSON_COLUMNS,
  NDJSON_FIELD_COLUMNS,
  ndjsonSerdeParameters,
  PARQUET_COLUMNS,
  PARQUET_LOCATION_ROOT,
  PARQUET_PARTITION_LOCATION,
  PARTITION_COLUMNS,
  PARTITION_LOCATION,
  projectionParameters,
} from '../../../src/archive/query-layout.js';

/** The location Athena projects for one partition: the template with its placeholders filled. */
function projectedLocation(
  base: string,
  values: { table: string; dt: string; hour: string },
  template = PARTITION_LOCATION,
): string {
  return `${base}${template}`
    .replace('${table}', values.table)
    .replace('${dt}', values.dt)
    .replace('${hour}', values.hour);
}

describe('the archive tables: columns and partitions', () => {
  it('names no data column after a partition, in either layout, so no reader of the path overwrites one', () => {
    const partitions = new Set(PARTITION_COLUMNS.map((c) => c.name));
    for (const columns of [NDJSON_COLUMNS, PARQUET_COLUMNS]) {
      const names = columns.map((c) => c.name);
      expect(names.filter((n) => partitions.has(n))).toEqual([]);
      expect(new Set(names).size).toBe(names.length);
      // Athena's names: lowercase, digits, underscore.
      for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
    }
  });

  it('maps every NDJSON column named apart from its row field, keeping key case in the JSON text', () => {
    const serde = ndjsonSerdeParameters();
    expect(serde['case.insensitive']).toBe('false');
    for (const [field, column] of Object.entries(NDJSON_FIELD_COLUMNS)) {
      expect(serde[`mapping.${column.name}`]).toBe(column.name === field ? undefined : field);
    }
    expect(serde['mapping.table_name']).toBe('table');
    expect(serde['mapping.tenant_id']).toBe('tenant');
  });

  it('shares the envelope columns that mean the same thing between the layouts, with the same type', () => {
    const parquet = new Map(PARQUET_COLUMNS.map((c) => [c.name, c.type]));
    const shared = NDJSON_COLUMNS.filter((c) => parquet.has(c.name));
    expect(shared.map((c) => c.name).sort()).toEqual(
      [
        'aws_region',
        'event_id',
        'event_name',
        'event_source',
        'event_source_arn',
        'event_version',
        'keys',
        'kind',
        'kinesis',
        'new_image',
        'old_image',
        'sequence_number',
        'shard',
        'size_bytes',
        'stream_view_type',
        'table_name',
        'tenant_id',
        'ttl_attribute',
        'ttl_text',
      ].sort(),
    );
    for (const c of shared) expect(parquet.get(c.name), c.name).toBe(c.type);
  });

  it('projects a location for every object key the sinks write: the key lies below it, with its partition values', () => {
    // Any id: one tenantSegment refuses is never in a key.
    const tenant = fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: undefined });
    fc.assert(
      fc.property(
        fc.constantFrom('archive', 'cold/archive', 'archive/user-deletes'),
        fc.stringMatching(/^[A-Za-z0-9_.-]{3,20}$/),
        fc.integer({ min: Date.UTC(2020, 0, 1) / 1000, max: Date.UTC(2035, 0, 1) / 1000 }),
        tenant,
        fc.constantFrom('shardId-00000001', 'stream-2026-01-15T00:00:00.000'),
        (prefix, table, epochSeconds, tenantId, shard) => {
          let segment: string | undefined;
          try {
            segment = tenantId === undefined ? undefined : tenantSegment(tenantId);
          } catch {
            return; // an id the sinks refuse is never a key
          }
          const partition: ArchivePartition = { table, ...partitionTime(epochSeconds), shard };
          if (segment !== undefined) partition.tenant = segment;
          const key = objectKey(prefix, partition, '100', '200');
          const parsed = parseArchiveKey(key);
          expect(parsed).toBeDefined();
          const values = { table, dt: parsed?.dt as string, hour: parsed?.hour as string };
          // The projected values are in the projection's ranges: dt a yyyy-MM-dd date, hour 00–23.
          expect(values.dt).toMatch(/^\d{4}-\d{2}-\d{2}$/);
          expect(Number(values.hour)).toBeLessThanOrEqual(23);
          expect(values.hour).toHaveLength(Number(projectionParameters(table)['projection.hour.digits']));
          const location = projectedLocation(`s3://bucket/${prefix}/`, values);
          expect(`s3://bucket/${key}`.startsWith(location)).toBe(true);
        },
      ),
    );
  });

  it("keeps each format under its own root: a partition location holds one format, the archive's only", () => {
    // Prefixes as an operator may give them, `parquet` segments and table-like names included.
    const segment = fc.constantFrom('archive', 'parquet', 'table=parquet', 'x.parquet', 'user-deletes', 'p');
    const prefix = fc.array(segment, { maxLength: 3 }).map((parts) => parts.join('/'));
    const table = fc.oneof(fc.constant('parquet'), fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/));
    const tenant = fc.option(fc.constantFrom('acme', 'z!C3!BCrich!20corp'), { nil: undefined });
    fc.assert(
      fc.property(
        prefix,
        prefix,
        table,
        fc.integer({ min: Date.UTC(2020, 0, 1) / 1000, max: Date.UTC(2035, 0, 1) / 1000 }),
        tenant,
        fc.constantFrom('shardId-00000001', 'stream-2026-01-15T00:00:00.000', 'parquet'),
        (prefix, other, table, epochSeconds, tenantSegment, shard) => {
          const partition: ArchivePartition = { table, ...partitionTime(epochSeconds), shard };
          if (tenantSegment !== undefined) partition.tenant = tenantSegment;
          const hourPrefix = partitionPrefix(prefix, partition);
          const ndjson = objectKey(prefix, partition, '100', '200', '0123456789ab');
          const parquet = parquetObjectKey(prefix, partition, '100', '200', '0123456789ab');
          const fields = {
            hourPrefix,
            table,
            dt: partition.dt,
            hour: partition.hour,
            shard,
            first: '100',
            last: '200',
            tag: '0123456789ab',
            ...(tenantSegment === undefined ? {} : { tenant: tenantSegment }),
          };
          // Both parse back to the archive's hour (its prefix, not the root), in their format.
          expect(parseArchiveKey(ndjson)).toEqual({ key: ndjson, ...fields, format: 'ndjson' });
          expect(parseArchiveKey(parquet)).toEqual({ key: parquet, ...fields, format: 'parquet' });
          // Each lies below its own table's projected location and never below the other's.
          const base = `s3://bucket/${prefix === '' ? '' : `${prefix}/`}`;
          const ndjsonLocation = projectedLocation(base, partition);
          const parquetLocation = projectedLocation(base, partition, PARQUET_PARTITION_LOCATION);
          expect(parquetLocation).toBe(`${base}${PARQUET_LOCATION_ROOT}${ndjsonLocation.slice(base.length)}`);
          expect(`s3://bucket/${ndjson}`.startsWith(ndjsonLocation)).toBe(true);
          expect(`s3://bucket/${parquet}`.startsWith(parquetLocation)).toBe(true);
          expect(`s3://bucket/${ndjson}`.startsWith(parquetLocation)).toBe(false);
          expect(`s3://bucket/${parquet}`.startsWith(ndjsonLocation)).toBe(false);
          // Another archive's keys never name this archive's hour, even where its NDJSON objects
          // share this one's Parquet folder (its prefix is `<prefix>/parquet`).
          if (other !== prefix) {
            for (const key of [
              objectKey(other, partition, '100', '200'),
              parquetObjectKey(other, partition, '100', '200', '0123456789ab'),
            ])
              expect(parseArchiveKey(key)?.hourPrefix).not.toBe(hourPrefix);
          }
        },
      ),
    );
    // A `.parquet` object outside a Parquet root is no archive object (nor a table `parquet`'s).
    expect(parseArchiveKey('a/table=t/dt=2026-01-15/hour=10/s-1-2-0123456789ab.parquet')).toBeUndefined();
    expect(
      parseArchiveKey('a/xparquet/table=t/dt=2026-01-15/hour=10/s-1-2-0123456789ab.parquet'),
    ).toBeUndefined();
    expect(parseArchiveKey('parquet/table=t/dt=2026-01-15/hour=10/s-1-2-0123456789ab.parquet')).toMatchObject(
      {
        hourPrefix: 'table=t/dt=2026-01-15/hour=10/',
        table: 't',
      },
    );
    expect(parseArchiveKey('parquet/table=t/dt=2026-01-15/hour=10/s/1-2.ndjson.gz')).toMatchObject({
      hourPrefix: 'parquet/table=t/dt=2026-01-15/hour=10/',
      format: 'ndjson',
    });
  });

  it('gives the view each change once, by event_id, within the partition columns', () => {
    const sql = dedupViewSql('user_delete_archive');
    expect(sql).toMatch(/^CREATE OR REPLACE VIEW user_delete_archive_dedup AS/);
    expect(sql).toContain('PARTITION BY "table", dt, hour, event_id');
    expect(sql).toContain('FROM user_delete_archive t');
    // The view keeps every column of the table and the partitions.
    for (const c of [...NDJSON_COLUMNS, ...PARTITION_COLUMNS])
      expect(sql).toContain(c.name === 'table' ? '"table"' : c.name);
  });
});
