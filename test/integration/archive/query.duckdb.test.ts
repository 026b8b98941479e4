import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeObject } from '../../../src/archive/format.js';
import { tenantFromPartitionKey } from '../../../src/archive/partition.js';
import { createPipeline, kinesisSource } from '../../../src/pipeline/index.js';
import { parseStreamEvent } from '../../../src/records/index.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { sampleSequenceNumber, sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { kinesisCopies, kinesisSequenceNumber } from '../../support/kinesis-copies.js';
import { tenantRecordsRaw } from '../../support/tenant-records.js';
import { HOUR_10, snapshot } from './helpers.js';

/**
 * The archive as a data engineer queries it: the objects S3ArchiveSink wrote, read by DuckDB,
 * through the view and the queries of docs/sinks.md#athena, taken from the page as written. What
 * DuckDB spells differently (the tables, `json_extract_scalar`) is here and listed on the page.
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

/** The page's SQL: the view, and each query by its `-- Qn:` label. */
async function docsSql(): Promise<{ view: string; queries: Map<string, string> }> {
  const page = await readFile(new URL('../../../docs/sinks.md', import.meta.url), 'utf8');
  const view = /CREATE OR REPLACE VIEW ttl_archive_dedup AS[\s\S]*?;/.exec(page)?.[0];
  const queries = new Map<string, string>();
  for (const m of page.matchAll(/^-- (Q\d): .*\n([\s\S]*?;)/gm)) queries.set(m[1] as string, m[2] as string);
  if (view === undefined || queries.size !== 4)
    throw new Error('docs/sinks.md: the Athena view or Q1–Q4 not found');
  return { view, queries };
}

/** The user-delete archive's spelling of a statement over the TTL archive, as the docs say. */
const overUserDeletes = (statement: string) =>
  statement
    .replaceAll('ttl_archive_dedup', 'user_delete_archive_dedup')
    .replaceAll('FROM ttl_archive t', 'FROM user_delete_archive t');

/**
 * The table as the docs' DDL declares it, DuckDB-side: every row field, images as JSON text.
 * `tbl`, `dt` and `hour` stand for Athena's projected partition columns; DuckDB reads files
 * without hive partitioning (it would overwrite the data column `table` with the key's).
 */
function tableSql(name: string, files: readonly string[]): string {
  const list = files.map((f) => `'${f}'`).join(', ');
  return `
CREATE TABLE ${name} AS
SELECT *, "table" AS tbl,
       strftime(to_timestamp(approximateCreationDateTime), '%Y-%m-%d') AS dt,
       strftime(to_timestamp(approximateCreationDateTime), '%H') AS hour
FROM read_ndjson([${list}], compression = 'gzip', hive_partitioning = false, columns = {
  eventID: 'VARCHAR', sequenceNumber: 'VARCHAR', shard: 'VARCHAR', eventName: 'VARCHAR', kind: 'VARCHAR',
  approximateCreationDateTime: 'DOUBLE', "table": 'VARCHAR', tenant: 'VARCHAR',
  keys: 'JSON', oldImage: 'JSON', newImage: 'JSON',
  ttlAttribute: 'VARCHAR', ttl: 'VARCHAR', eventSourceARN: 'VARCHAR', awsRegion: 'VARCHAR',
  userIdentity: 'JSON', sizeBytes: 'BIGINT', streamViewType: 'VARCHAR', eventVersion: 'VARCHAR',
  eventSource: 'VARCHAR', kinesis: 'JSON'
})`;
}

/** Athena's name for DuckDB's json_extract_string: the one function the queries spell differently. */
const JSON_EXTRACT_SCALAR = 'CREATE MACRO json_extract_scalar(j, p) AS json_extract_string(j, p)';

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
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-duckdb-'));
    dirs.push(dir);
    await mkdir(join(dir, 'ttl'));
    await mkdir(join(dir, 'user'));
    const ttlFiles: string[] = [];
    const userFiles: string[] = [];
    let rawTtlRows = 0;
    let n = 0;
    for (const [key, { body }] of objects) {
      if (!key.endsWith('.ndjson.gz')) continue;
      const user = key.startsWith(`${USER_PREFIX}/`);
      const file = join(dir, user ? 'user' : 'ttl', `${n++}.ndjson.gz`);
      await writeFile(file, body);
      (user ? userFiles : ttlFiles).push(file);
      if (!user) rawTtlRows += decodeObject(body, key).length;
    }
    // The raw objects hold copies: 140 from the cut redeliveries.
    expect(rawTtlRows).toBe(TTL_COUNT + 140);

    const { view, queries } = await docsSql();
    const query = (label: string) => queries.get(label) as string;
    const db = await DuckDBInstance.create(':memory:');
    const sql = await db.connect();
    try {
      const rows = async (statement: string) => (await sql.runAndReadAll(statement)).getRowObjectsJS();
      await sql.run("SET TimeZone = 'UTC'");
      await sql.run(JSON_EXTRACT_SCALAR);
      await sql.run(tableSql('ttl_archive', ttlFiles));
      await sql.run(tableSql('user_delete_archive', userFiles));
      await sql.run(view);
      await sql.run(overUserDeletes(view));

      expect(await rows('SELECT count(*)::INTEGER AS n FROM ttl_archive')).toEqual([{ n: TTL_COUNT + 140 }]);
      expect(await rows('SELECT count(*)::INTEGER AS n FROM ttl_archive_dedup')).toEqual([{ n: TTL_COUNT }]);
      expect(await rows('SELECT count(*)::INTEGER AS n FROM user_delete_archive')).toEqual([
        { n: USER_COUNT + 1 + 30 },
      ]);

      // Q1: expired per tenant per hour — and user deletes through the same query — as written.
      for (const [records, statement] of [
        [ttlRecords, query('Q1')],
        [userRecords, overUserDeletes(query('Q1'))],
      ] as const) {
        const expected = new Map<string, number>();
        for (const r of records) {
          const id = `${tenantOf(r)}/2026-01-15/${hourOf(r)}`;
          expected.set(id, (expected.get(id) ?? 0) + 1);
        }
        const counted = await rows(statement);
        expect(new Map(counted.map((r) => [`${r.tenant}/${r.dt}/${r.hour}`, Number(r.expired)]))).toEqual(
          expected,
        );
        expect(counted).toHaveLength(TENANTS.length * 2);
      }

      // Q2: one tenant's expired items of a day, the 38-digit number exact; the tenant is the
      // decoded id (its key segment is z!C3!BCrich!20corp).
      // DuckDB's own values (getRowObjects): its JS conversion would turn a DECIMAL into a double.
      const zurich = (await sql.runAndReadAll(query('Q2'))).getRowObjects();
      const zurichRecords = ttlRecords.filter((r) => tenantOf(r) === 'zürich corp');
      expect(zurich).toHaveLength(zurichRecords.length);
      const amounts = new Map(
        zurichRecords.map((r) => [String(r.raw.dynamodb.Keys.pk?.S), r.raw.dynamodb.OldImage?.amount?.N]),
      );
      for (const row of zurich) {
        const written = amounts.get(String(row.pk)) as string;
        expect(written).toHaveLength(38);
        expect(String(row.amount_text)).toBe(written);
        expect(String(row.amount)).toBe(written);
      }

      // Q3: every change of one item, across both archives: once each, though its TTL row was redelivered.
      expect(await rows(query('Q3'))).toEqual([
        { kind: 'user-delete', eventID: 'ev-user-42', approximateCreationDateTime: HOUR_10 / 1000 + 20 },
        {
          kind: 'ttl-delete',
          eventID: ITEM_42.eventID,
          approximateCreationDateTime: ITEM_42.approximateCreationTime,
        },
      ]);

      // Q4: the sum of a nested number attribute, exact.
      const hits = ttlRecords.reduce(
        (total, r) => total + BigInt(r.raw.dynamodb.OldImage?.attrs?.M?.hits?.N ?? '0'),
        0n,
      );
      expect(await rows(query('Q4'))).toEqual([{ hits: hits.toString() }]);
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
    const files: string[] = [];
    for (const [key, { body }] of await snapshot(s3, bucket)) {
      if (!key.endsWith('.ndjson.gz')) continue;
      const file = join(dir, `${files.length}.ndjson.gz`);
      await writeFile(file, body);
      files.push(file);
    }
    const { view } = await docsSql();
    const db = await DuckDBInstance.create(':memory:');
    const sql = await db.connect();
    try {
      await sql.run("SET TimeZone = 'UTC'");
      await sql.run(tableSql('ttl_archive', files));
      await sql.run(view);
      const count = async (from: string) =>
        (await sql.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM ${from}`)).getRowObjectsJS();
      expect(await count('ttl_archive')).toEqual([{ n: 32 }]);
      expect(await count('ttl_archive_dedup')).toEqual([{ n: 30 }]);
      const ids = (
        await sql.runAndReadAll('SELECT eventID FROM ttl_archive_dedup ORDER BY eventID')
      ).getRowObjectsJS();
      expect(ids.map((r) => r.eventID)).toEqual(kinesisChanges.map((r) => r.eventID).sort());
    } finally {
      sql.closeSync();
      db.closeSync();
    }
  });
});
