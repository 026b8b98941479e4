import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import type { ArchiveRow } from '../../../src/archive/format.js';
import { tenantFromPartitionKey } from '../../../src/archive/partition.js';
import { readArchiveRows } from '../../../src/archive/read-archive.js';
import { type CompactionManifest, compactArchive, eraseTenant, restoreItems } from '../../../src/archive.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { parseStreamEvent } from '../../../src/records/index.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { createTestBucket, createTestTable, localClients, STRING_SORT_KEY } from '../../support/aws.js';
import { tenantRecordsRaw } from '../../support/tenant-records.js';
import { HOUR, HOUR_10, readBack, readRowsBack, rowId, snapshot, TABLE } from './helpers.js';

/**
 * An archive compacted to Parquet on the local S3 server: the project's readers read it back as
 * the NDJSON it replaced, erase rewrites it as Parquet, and DuckDB reads the files with hive
 * partitioning, typed, and answers as the NDJSON archive does.
 */

const PREFIX = 'archive';
const TENANTS = ['acme', 'zürich corp', 'globex'] as const;
const COUNT = 240;
/** TTL deletes 30 s apart from 10:00 (two hours), tenants round-robin, 38-digit `amount`s. */
const records = parseStreamEvent({
  Records: tenantRecordsRaw(COUNT, TENANTS, { table: TABLE, firstTime: HOUR_10 / 1000, spacingSeconds: 30 }),
});
const tenantOf = (pk: string) => pk.split('#')[0] as string;
const hours = { table: TABLE, prefix: PREFIX, from: HOUR_10, to: HOUR_10 + 2 * HOUR };
const byId = (a: ArchiveRow, b: ArchiveRow) => (rowId(a) < rowId(b) ? -1 : 1);

/** Two tenants of a batch get objects of their own, the third's rows go unpartitioned; two redeliveries. */
async function archive(bucket: string, s3: ReturnType<typeof localClients>['s3']): Promise<void> {
  const sink = new S3ArchiveSink({
    client: s3,
    bucket,
    prefix: PREFIX,
    partitionBy: tenantFromPartitionKey(),
    maxPartitionsPerBatch: 2,
  });
  for (let i = 0; i < COUNT; i += 40) expect(await sink.write(records.slice(i, i + 40), {})).toEqual({});
  expect(await sink.write(records.slice(20, 90), {})).toEqual({});
  expect(await sink.write(records.slice(130, 200), {})).toEqual({});
}

/** The bucket's archive objects as files at their keys, as `aws s3 sync` leaves them for DuckDB. */
async function download(objects: Map<string, { body: Buffer }>, dir: string, suffix: string): Promise<void> {
  for (const [key, { body }] of objects) {
    if (!key.endsWith(suffix) || key.includes('_compaction/')) continue;
    const file = join(dir, key);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, body);
  }
}

describe('an archive compacted to Parquet', () => {
  const { s3, dynamodb } = localClients();
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('is read back as the NDJSON it replaced, restored, erased as Parquet, and queried with DuckDB', async () => {
    const bucket = await createTestBucket(s3);
    await archive(bucket, s3);
    const ndjsonObjects = await snapshot(s3, bucket);
    const rowsBefore = (await readRowsBack(s3, bucket, PREFIX)).sort(byId);
    const recordsBefore = await readBack(s3, bucket, { prefix: PREFIX });
    expect(rowsBefore).toHaveLength(COUNT);

    // Parquet's options without `format: 'parquet'` are a mistake, refused before anything is read.
    await expect(
      compactArchive({ client: s3, bucket, ...hours, typedColumns: { amount: 'number' } }),
    ).rejects.toThrow(InvalidOptionsError);
    const report = await compactArchive({
      client: s3,
      bucket,
      ...hours,
      format: 'parquet',
      partitionBy: tenantFromPartitionKey(),
      typedColumns: { amount: 'number', ratio: 'number', ttl: 'number', pk: 'string' },
    });
    expect(report.hours.map((h) => [h.status, h.rowsWritten, h.unassigned])).toEqual([
      ['compacted', 120, 0],
      ['compacted', 120, 0],
    ]);
    const compacted = await snapshot(s3, bucket);
    const dataKeys = [...compacted.keys()].filter((k) => !k.includes('/_compaction/'));
    // One object per tenant and hour under the Parquet root, every folder below it a key=value partition.
    expect(dataKeys).toHaveLength(6);
    for (const key of dataKeys) {
      expect(key).toMatch(
        /^archive\/parquet\/table=[^/]+\/dt=2026-01-15\/hour=1[01]\/tenant=[^/]+\/[^/]+\.parquet$/,
      );
    }
    const manifestKey = report.hours[0]?.manifest as string;
    const manifest = JSON.parse(
      compacted.get(manifestKey)?.body.toString('utf8') ?? '',
    ) as CompactionManifest;
    expect(manifest.format).toBe('parquet');

    // The readers: identical rows and records from Parquet.
    expect((await readRowsBack(s3, bucket, PREFIX)).sort(byId)).toEqual(rowsBefore);
    const recordsAfter = await readBack(s3, bucket, { prefix: PREFIX });
    expect(new Set(recordsAfter.map((r) => JSON.stringify(r.raw)))).toEqual(
      new Set(recordsBefore.map((r) => JSON.stringify(r.raw))),
    );
    // A second run in the same format changes nothing.
    const again = await compactArchive({ client: s3, bucket, ...hours, format: 'parquet' });
    expect(again.hours.map((h) => h.status)).toEqual(['unchanged', 'unchanged']);

    // restoreItems from the Parquet rows of one tenant.
    const table = await createTestTable(dynamodb, STRING_SORT_KEY);
    try {
      const rows = readArchiveRows({ client: s3, bucket, ...hours, tenant: 'acme' });
      const restored = await restoreItems({
        client: dynamodb,
        tableName: table.tableName,
        rows,
        overwrite: true,
      });
      expect(restored.written).toBe(COUNT / 3);
      const scan = await dynamodb.send(new ScanCommand({ TableName: table.tableName }));
      expect(scan.Items?.every((item) => item.pk?.S?.startsWith('acme#'))).toBe(true);
      expect(scan.Items?.map((i) => i.amount?.N).sort()).toEqual(
        records
          .filter((r) => tenantOf(String(r.raw.dynamodb.Keys.pk?.S)) === 'acme')
          .map((r) => r.raw.dynamodb.OldImage?.amount?.N)
          .sort(),
      );
    } finally {
      await table.drop();
    }

    const dir = await mkdtemp(join(tmpdir(), 'tidewater-parquet-'));
    dirs.push(dir);
    await download(ndjsonObjects, join(dir, 'ndjson'), '.ndjson.gz');
    await download(compacted, join(dir, 'parquet'), '.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const sql = await db.connect();
    try {
      await sql.run("SET TimeZone = 'UTC'");
      const rows = async (statement: string) => (await sql.runAndReadAll(statement)).getRowObjectsJS();
      const parquet = (from: string) =>
        `read_parquet('${join(dir, from)}/archive/parquet/**/*.parquet', hive_partitioning = true)`;
      await sql.run(`CREATE VIEW archive_parquet AS SELECT * FROM ${parquet('parquet')}`);
      // The NDJSON archive as before compaction, de-duplicated by (shard, sequence number, eventID).
      const ndjsonFiles = [...ndjsonObjects.keys()]
        .filter((k) => k.endsWith('.ndjson.gz'))
        .map((k) => `'${join(dir, 'ndjson', k)}'`);
      await sql.run(`CREATE VIEW archive_ndjson AS
        SELECT DISTINCT ON (shard, sequenceNumber, eventID) *,
               to_timestamp(approximateCreationDateTime) AS created
        FROM read_ndjson([${ndjsonFiles.join(', ')}], compression = 'gzip', hive_partitioning = false, columns = {
          eventID: 'VARCHAR', sequenceNumber: 'VARCHAR', shard: 'VARCHAR', kind: 'VARCHAR',
          approximateCreationDateTime: 'DOUBLE', tenant: 'VARCHAR', keys: 'JSON', oldImage: 'JSON'
        })`);

      // Types: timestamps, the 38-digit amounts as DECIMAL(38, 0), partitions beside (not over) data columns.
      const described = new Map(
        (await rows('DESCRIBE SELECT * FROM archive_parquet')).map((r) => [r.column_name, r.column_type]),
      );
      expect(
        Object.fromEntries(
          [
            'approximate_creation_time',
            'ttl',
            'item_amount',
            'item_ratio',
            'item_pk',
            'table_name',
            'tenant_id',
            'tenant',
            'table',
            'size_bytes',
          ].map((c) => [c, described.get(c)]),
        ),
      ).toEqual({
        approximate_creation_time: 'TIMESTAMP WITH TIME ZONE',
        ttl: 'TIMESTAMP WITH TIME ZONE',
        item_amount: 'DECIMAL(38,0)',
        item_ratio: 'DECIMAL(38,6)',
        item_pk: 'VARCHAR',
        table_name: 'VARCHAR',
        tenant_id: 'VARCHAR',
        tenant: 'VARCHAR',
        table: 'VARCHAR',
        size_bytes: 'BIGINT',
      });

      // Counts by kind, tenant and hour: what was written, and what the NDJSON archive answers.
      const expected = new Map<string, number>();
      for (const r of records) {
        const id = `${r.kind}/${tenantOf(String(r.raw.dynamodb.Keys.pk?.S))}/${new Date((r.approximateCreationTime as number) * 1000).toISOString().slice(11, 13)}`;
        expected.set(id, (expected.get(id) ?? 0) + 1);
      }
      const counts = async (statement: string) =>
        new Map((await rows(statement)).map((r) => [`${r.kind}/${r.tenant}/${r.hour}`, Number(r.n)]));
      expect(
        await counts(
          `SELECT kind, tenant_id AS tenant, strftime(approximate_creation_time, '%H') AS hour, count(*) AS n FROM archive_parquet GROUP BY ALL`,
        ),
      ).toEqual(expected);
      expect(
        await counts(
          `SELECT kind, tenant, strftime(created, '%H') AS hour, count(*) AS n FROM archive_ndjson GROUP BY ALL`,
        ),
      ).toEqual(expected);

      // One tenant-day, the 38-digit number exact through the typed column and the image text.
      const zurich = (
        await sql.runAndReadAll(`SELECT pk, item_amount::VARCHAR AS amount, json_extract_string(old_image, '$.amount.N') AS amount_text
          FROM archive_parquet WHERE tenant_id = 'zürich corp' AND dt = '2026-01-15' ORDER BY sequence_number`)
      ).getRowObjectsJS();
      const zurichNdjson = (
        await sql.runAndReadAll(`SELECT json_extract_string(keys, '$.pk.S') AS pk, json_extract_string(oldImage, '$.amount.N') AS amount
          FROM archive_ndjson WHERE tenant = 'zürich corp' AND strftime(created, '%Y-%m-%d') = '2026-01-15' ORDER BY sequenceNumber`)
      ).getRowObjectsJS();
      expect(zurich).toHaveLength(COUNT / 3);
      expect(zurich.map((r) => [r.pk, r.amount])).toEqual(zurichNdjson.map((r) => [r.pk, r.amount]));
      for (const r of zurich) {
        expect(String(r.amount)).toHaveLength(38);
        expect(r.amount).toBe(r.amount_text);
      }

      // Every change of one item.
      const item = records[42]?.raw.dynamodb.Keys.pk?.S as string;
      expect(
        await rows(
          `SELECT kind, event_id, approximate_creation_time::VARCHAR AS at FROM archive_parquet WHERE pk = '${item}' ORDER BY sequence_number`,
        ),
      ).toEqual([
        {
          kind: 'ttl-delete',
          event_id: records[42]?.eventID,
          at: `${new Date((records[42]?.approximateCreationTime as number) * 1000).toISOString().slice(0, 19).replace('T', ' ')}+00`,
        },
      ]);
    } finally {
      sql.closeSync();
      db.closeSync();
    }

    // Erase globex from 10:30: its hour-10 object is rewritten as Parquet, its hour-11 object deleted.
    const erased = await eraseTenant({
      client: s3,
      bucket,
      table: TABLE,
      prefix: PREFIX,
      tenant: 'globex',
      from: HOUR_10 + HOUR / 2,
      to: HOUR_10 + 2 * HOUR,
    });
    expect(erased.rewritten).toHaveLength(1);
    expect(erased.rewritten[0]?.replacement).toMatch(
      /^archive\/parquet\/table=.*\/tenant=globex\/[^/]+\.parquet$/,
    );
    const afterErase = await snapshot(s3, bucket);
    const erasedDir = await mkdtemp(join(tmpdir(), 'tidewater-parquet-'));
    dirs.push(erasedDir);
    await download(afterErase, erasedDir, '.parquet');
    const db2 = await DuckDBInstance.create(':memory:');
    const sql2 = await db2.connect();
    try {
      await sql2.run("SET TimeZone = 'UTC'");
      const left = (
        await sql2.runAndReadAll(`SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE approximate_creation_time >= TIMESTAMPTZ '2026-01-15 10:30:00+00')::INTEGER AS inRange
          FROM read_parquet('${erasedDir}/archive/parquet/**/*.parquet', hive_partitioning = true) WHERE tenant_id = 'globex'`)
      ).getRowObjectsJS();
      expect(left).toEqual([{ n: globexEarlyCount(), inRange: 0 }]);
    } finally {
      sql2.closeSync();
      db2.closeSync();
    }
    // The project's reader agrees, and the other tenants are untouched.
    const remaining = await readRowsBack(s3, bucket, PREFIX);
    expect(remaining.filter((r) => r.tenant === 'globex')).toHaveLength(globexEarlyCount());
    expect(remaining.filter((r) => r.tenant !== 'globex').sort(byId)).toEqual(
      rowsBefore.filter((r) => r.tenant !== 'globex'),
    );
  });
});

function globexEarlyCount(): number {
  return records.filter(
    (r) =>
      tenantOf(String(r.raw.dynamodb.Keys.pk?.S)) === 'globex' &&
      (r.approximateCreationTime as number) * 1000 < HOUR_10 + HOUR / 2,
  ).length;
}
