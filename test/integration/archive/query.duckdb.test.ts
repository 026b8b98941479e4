import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeObject, parquetRoot } from '../../../src/archive/format.js';
import { tenantFromPartitionKey, tenantSegment } from '../../../src/archive/partition.js';
import { createPipeline, kinesisSource } from '../../../src/pipeline/index.js';
import { parseStreamEvent } from '../../../src/records/index.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { sampleSequenceNumber, sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { kinesisCopies, kinesisSequenceNumber } from '../../support/kinesis-copies.js';
import { queryDocs } from '../../support/query-docs.js';
import { tenantRecordsRaw } from '../../support/tenant-records.js';
import { HOUR_10, snapshot } from './helpers.js';

/**
 * The archive as a data engineer queries it: the objects S3ArchiveSink wrote, copied under their
 * keys and read by DuckDB through docs/query.md's DuckDB tables, view and first queries, taken
 * from the page as written (only the bucket becomes the local copy) — over the NDJSON objects and
 * over the same hours in the Parquet layout.
 */

const PREFIX = 'archive';
const USER_PREFIX = 'archive/user-deletes';
// One tenant id that a key must escape: the row carries it decoded.
const TENANTS = ['acme', 'zürich corp', 'globex'] as const;
const TTL_COUNT = 240;
const USER_COUNT = 60;

const TABLE = 'orders';
/** TTL deletes 30 s apart from 10:00, so two hours; tenants round-robin. */
const ttlRecords = parseStreamEvent({
  Records: tenantRecordsRaw(TTL_COUNT, TENANTS, {
    table: TABLE,
    firstTime: HOUR_10 / 1000,
    spacingSeconds: 30,
  }),
});
/**
 * User deletes (no TTL service identity) over the same two hours, on sequence numbers of their
 * own; the last is of the item the docs' Q3 follows (`acme#session#42`), deleted by a user before
 * it was written again and expired.
 */
const userRecords = parseStreamEvent({
  Records: [
    ...tenantRecordsRaw(USER_COUNT, TENANTS, {
      table: TABLE,
      start: 10_000,
      firstTime: HOUR_10 / 1000 + 15,
      spacingSeconds: 120,
    }),
    ...tenantRecordsRaw(1, TENANTS, { table: TABLE, start: 42, firstTime: HOUR_10 / 1000 + 20 }).map(
      (record) => ({
        ...record,
        eventID: 'ev-user-42',
        dynamodb: { ...record.dynamodb, SequenceNumber: sampleSequenceNumber(20_000) },
      }),
    ),
  ].map(({ userIdentity: _service, ...record }) => record),
});
const ITEM_42 = ttlRecords[42] as ClassifiedRecord;

/** 30 TTL deletes of hour 10 as Kinesis Data Streams for DynamoDB delivers them. */
const kinesisChanges = sampleTtlDeletes(30, { firstTime: HOUR_10 / 1000, spacingSeconds: 10, table: TABLE });
const kinesisRecords = kinesisCopies(kinesisChanges, TABLE);
type KinesisRecord = (typeof kinesisRecords)[number];

/** The docs' bucket: the DuckDB statements read `s3://my-archive/…`; here a local copy of the keys. */
const DOCS_BUCKET = 's3://my-archive/';

/** The user-delete archive's spelling of a statement over the TTL archive, as the docs say. */
const overUserDeletes = (statement: string) =>
  statement
    .replaceAll('ttl_archive_dedup', 'user_delete_archive_dedup')
    .replaceAll('ttl_archive_parquet', 'user_delete_archive_parquet')
    .replaceAll('FROM ttl_archive t', 'FROM user_delete_archive t')
    .replace('VIEW ttl_archive AS', 'VIEW user_delete_archive AS')
    .replace('/archive/table=*', '/archive/user-deletes/table=*')
    .replace('/archive/parquet/table=*', '/archive/user-deletes/parquet/table=*');

/**
 * The docs' DuckDB setup over a local copy of the bucket (`dir` holds the objects under their
 * keys), for one layout: NDJSON (the macro, the tables, the de-duplicating views) or Parquet (its
 * tables). DuckDB binds a view's files when it is created, so each layout's files must exist by then.
 */
async function createDocsTables(
  sql: DuckDBConnection,
  dir: string,
  layout: 'ndjson' | 'parquet',
  userDeletes = true,
): Promise<void> {
  const { duckdb, view } = queryDocs();
  await sql.run("SET TimeZone = 'UTC'");
  for (const statement of duckdb) {
    const local = statement.replaceAll(DOCS_BUCKET, `${dir}/`);
    const reads = /read_(ndjson|parquet)\(/.exec(local)?.[1] ?? 'ndjson';
    if (reads !== layout) continue;
    await sql.run(local);
    if (userDeletes && local.startsWith('CREATE VIEW')) await sql.run(overUserDeletes(local));
  }
  if (layout === 'parquet') return;
  await sql.run(view);
  if (userDeletes) await sql.run(overUserDeletes(view));
}

/** Writes every object of a bucket snapshot under its key below `dir`. */
async function copyBucket(objects: Map<string, { body: Buffer }>, dir: string): Promise<void> {
  for (const [key, { body }] of objects) {
    await mkdir(dirname(join(dir, key)), { recursive: true });
    await writeFile(join(dir, key), body);
  }
}

/**
 * The archive's hours as compaction with `format: 'parquet'` lays them out (the Parquet layout,
 * docs/query.md's columns, under the Parquet root `<prefix>/parquet/`, `tenant=<segment>/`
 * folders, no shard folder), made by DuckDB from the
 * de-duplicated NDJSON rows: the Parquet tables must answer as the NDJSON ones do.
 */
async function writeParquetHours(sql: DuckDBConnection, dir: string, archive: string, prefix: string) {
  const groups = (
    await sql.runAndReadAll(`SELECT DISTINCT "table", dt, hour, tenant_id FROM ${archive}_dedup`)
  ).getRowObjectsJS();
  for (const g of groups) {
    const folder = join(
      dir,
      parquetRoot(prefix),
      `table=${g.table}/dt=${g.dt}/hour=${g.hour}/tenant=${tenantSegment(String(g.tenant_id))}`,
    );
    await mkdir(folder, { recursive: true });
    await sql.run(`
COPY (
  SELECT kind, event_name, table_name, tenant_id,
         coalesce(json_extract_string(keys, '$.pk.S'), json_extract_string(keys, '$.pk.N')) AS pk,
         coalesce(json_extract_string(keys, '$.sk.S'), json_extract_string(keys, '$.sk.N')) AS sk,
         keys::VARCHAR AS keys, shard, lpad(sequence_number, 40, '0') AS sequence_number, event_id,
         epoch_ms(CAST(approximate_creation_date_time * 1000 AS BIGINT))::TIMESTAMP_MS AS approximate_creation_time,
         ttl_attribute, epoch_ms(TRY_CAST(ttl_text AS BIGINT) * 1000)::TIMESTAMP_MS AS ttl, ttl_text,
         json_extract_string(user_identity, '$.principalId') AS deleted_by,
         json_extract_string(user_identity, '$.type') AS user_identity_type,
         old_image::VARCHAR AS old_image, new_image::VARCHAR AS new_image, event_source_arn, aws_region,
         stream_view_type, event_version, event_source, size_bytes, kinesis::VARCHAR AS kinesis
  FROM ${archive}_dedup
  WHERE "table" = '${g.table}' AND dt = '${g.dt}' AND hour = '${g.hour}' AND tenant_id = '${g.tenant_id}'
  ORDER BY sequence_number
) TO '${folder}/compacted.parquet' (FORMAT parquet)`);
  }
}

function hourOf(record: ClassifiedRecord): string {
  return new Date((record.approximateCreationTime as number) * 1000).toISOString().slice(11, 13);
}

function tenantOf(record: ClassifiedRecord): string {
  return String(record.raw.dynamodb.Keys.pk?.S).split('#')[0] as string;
}

describe('the archive queried with DuckDB through the docs view', () => {
  const { s3 } = localClients();
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('counts, tenants, 38-digit numbers and sums come back exact; redelivered copies are removed', async () => {
    const bucket = await createTestBucket(s3);
    // Two tenants per batch get objects of their own; the third's rows go to the hour's
    // unpartitioned object and still carry their tenant.
    const ttlSink = new S3ArchiveSink({
      client: s3,
      bucket,
      prefix: PREFIX,
      partitionBy: tenantFromPartitionKey(),
      maxPartitionsPerBatch: 2,
    });
    const userSink = new S3ArchiveSink({
      client: s3,
      bucket,
      prefix: USER_PREFIX,
      partitionBy: tenantFromPartitionKey(),
    });
    for (let i = 0; i < TTL_COUNT; i += 40)
      expect(await ttlSink.write(ttlRecords.slice(i, i + 40), {})).toEqual({});
    // Redeliveries cut at other points: objects overlapping the first ones.
    expect(await ttlSink.write(ttlRecords.slice(20, 90), {})).toEqual({});
    expect(await ttlSink.write(ttlRecords.slice(130, 200), {})).toEqual({});
    for (let i = 0; i < USER_COUNT; i += 25)
      expect(await userSink.write(userRecords.slice(i, i + 25), {})).toEqual({});
    expect(await userSink.write(userRecords.slice(10, 40), {})).toEqual({});

    const objects = await snapshot(s3, bucket);
    let rawTtlRows = 0;
    for (const [key, { body }] of objects)
      if (key.startsWith(`${PREFIX}/table=`)) rawTtlRows += decodeObject(body, key).length;
    // The raw objects hold copies: 140 from the cut redeliveries.
    expect(rawTtlRows).toBe(TTL_COUNT + 140);
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-duckdb-'));
    dirs.push(dir);
    await copyBucket(objects, dir);

    const { queries } = queryDocs();
    const query = (label: string) => queries.get(label) as string;
    const db = await DuckDBInstance.create(':memory:');
    const sql = await db.connect();
    try {
      const rows = async (statement: string) => (await sql.runAndReadAll(statement)).getRowObjectsJS();
      await createDocsTables(sql, dir, 'ndjson');
      await writeParquetHours(sql, dir, 'ttl_archive', PREFIX);
      await writeParquetHours(sql, dir, 'user_delete_archive', USER_PREFIX);
      await createDocsTables(sql, dir, 'parquet');

      expect(await rows('SELECT count(*)::INTEGER AS n FROM ttl_archive')).toEqual([{ n: TTL_COUNT + 140 }]);
      expect(await rows('SELECT count(*)::INTEGER AS n FROM ttl_archive_dedup')).toEqual([{ n: TTL_COUNT }]);
      expect(await rows('SELECT count(*)::INTEGER AS n FROM user_delete_archive')).toEqual([
        { n: USER_COUNT + 1 + 30 },
      ]);
      // Each layout's glob reads its own files only, the two side by side under one prefix.
      expect(await rows('SELECT count(*)::INTEGER AS n FROM ttl_archive_parquet')).toEqual([
        { n: TTL_COUNT },
      ]);
      expect(await rows('SELECT count(*)::INTEGER AS n FROM user_delete_archive_parquet')).toEqual([
        { n: USER_COUNT + 1 },
      ]);

      // Q3 / P3: expired per tenant per hour — and user deletes through the same query — as written.
      for (const label of ['Q3', 'P3']) {
        for (const [records, statement] of [
          [ttlRecords, query(label)],
          [userRecords, overUserDeletes(query(label))],
        ] as const) {
          const expected = new Map<string, number>();
          for (const r of records) {
            const id = `${tenantOf(r)}/2026-01-15/${hourOf(r)}`;
            expected.set(id, (expected.get(id) ?? 0) + 1);
          }
          const counted = await rows(statement);
          expect(
            new Map(counted.map((r) => [`${r.tenant_id}/${r.dt}/${r.hour}`, Number(r.expired)])),
            label,
          ).toEqual(expected);
          expect(counted).toHaveLength(TENANTS.length * 2);
        }
      }

      // Q1 / P1: one tenant's expired items of a day, the 38-digit number exact; the tenant is the
      // decoded id (its key segment is z!C3!BCrich!20corp).
      const zurichRecords = ttlRecords.filter((r) => tenantOf(r) === 'zürich corp');
      const amounts = new Map(
        zurichRecords.map((r) => [String(r.raw.dynamodb.Keys.pk?.S), r.raw.dynamodb.OldImage?.amount?.N]),
      );
      const answers: string[] = [];
      for (const label of ['Q1', 'P1']) {
        // DuckDB's own values (getRowObjects): its JS conversion would turn a DECIMAL into a double.
        const zurich = (await sql.runAndReadAll(query(label))).getRowObjects();
        expect(zurich, label).toHaveLength(zurichRecords.length);
        for (const row of zurich) {
          const written = amounts.get(String(row.pk)) as string;
          expect(written).toHaveLength(38);
          expect(String(row.amount_text)).toBe(written);
          expect(String(row.amount)).toBe(written);
        }
        answers.push(JSON.stringify(zurich.map((r) => [String(r.pk), String(r.amount)])));
      }
      expect(answers[0]).toBe(answers[1]);

      // Q2 / P2: every change of one item, across both archives, in order: once each, though its
      // TTL row was redelivered.
      const history = [
        { kind: 'user-delete', event_id: 'ev-user-42', time: HOUR_10 / 1000 + 20 },
        { kind: 'ttl-delete', event_id: ITEM_42.eventID, time: ITEM_42.approximateCreationTime as number },
      ];
      expect(await rows(query('Q2'))).toEqual(
        history.map(({ kind, event_id, time }) => ({ kind, event_id, approximate_creation_date_time: time })),
      );
      expect(await rows(query('P2'))).toEqual(
        history.map(({ kind, event_id, time }) => ({
          kind,
          event_id,
          approximate_creation_time: new Date(time * 1000),
        })),
      );

      // Q4 / P4: the sum of a nested number attribute, exact.
      const hits = ttlRecords.reduce(
        (total, r) => total + BigInt(r.raw.dynamodb.OldImage?.attrs?.M?.hits?.N ?? '0'),
        0n,
      );
      expect(await rows(query('Q4'))).toEqual([{ hits: hits.toString() }]);
      expect(await rows(query('P4'))).toEqual([{ hits: hits.toString() }]);
    } finally {
      sql.closeSync();
      db.closeSync();
    }
  });

  it('removes a Kinesis copy by its eventID, under another sequence number', async () => {
    const bucket = await createTestBucket(s3);
    const pipeline = createPipeline({
      source: kinesisSource(),
      routes: [{ when: 'ttl-delete', to: new S3ArchiveSink({ client: s3, bucket, prefix: PREFIX }) }],
      metrics: false,
    });
    // Kinesis delivers changes 5 and 12 twice, under new sequence numbers, in a later batch.
    const again = [5, 12].map((i, k) => ({
      ...(kinesisRecords[i] as KinesisRecord),
      kinesis: {
        ...(kinesisRecords[i] as KinesisRecord).kinesis,
        sequenceNumber: kinesisSequenceNumber(400 + k),
      },
    }));
    expect(await pipeline.process({ Records: kinesisRecords.slice(0, 20) })).toEqual({
      batchItemFailures: [],
    });
    expect(await pipeline.process({ Records: [...kinesisRecords.slice(20), ...again] })).toEqual({
      batchItemFailures: [],
    });

    const dir = await mkdtemp(join(tmpdir(), 'tidewater-duckdb-'));
    dirs.push(dir);
    await copyBucket(await snapshot(s3, bucket), dir);
    const db = await DuckDBInstance.create(':memory:');
    const sql = await db.connect();
    try {
      await createDocsTables(sql, dir, 'ndjson', false);
      const count = async (from: string) =>
        (await sql.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM ${from}`)).getRowObjectsJS();
      expect(await count('ttl_archive')).toEqual([{ n: 32 }]);
      expect(await count('ttl_archive_dedup')).toEqual([{ n: 30 }]);
      const ids = (
        await sql.runAndReadAll('SELECT event_id FROM ttl_archive_dedup ORDER BY event_id')
      ).getRowObjectsJS();
      expect(ids.map((r) => r.event_id)).toEqual(kinesisChanges.map((r) => r.eventID).sort());
    } finally {
      sql.closeSync();
      db.closeSync();
    }
  });
});
