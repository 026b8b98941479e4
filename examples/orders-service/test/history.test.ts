// Issue 39's promise, from the packed tarball: a day of changes of three tenants is archived
// (every change, partitioned by tenant, with a redelivery's duplicates), compacted to Parquet and
// queried with DuckDB (exact counts, an exact 38-digit number); one tenant is erased from the
// archive and the table, and queried again; then the archived history is replayed by
// `tidewater archive replay` (killed half-way, resumed from its checkpoint) through the copy
// handler's versionGuard into an empty table, which ends equal to the source table.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type AttributeValue,
  CreateTableCommand,
  DeleteItemCommand,
  type DynamoDBClient,
  PutItemCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  createStreamHandler,
  type Item,
  type LambdaStreamRecord,
  marshall,
  RECORD_KINDS,
  route,
  tenantFromPartitionKey,
} from 'tidewater';
import { compactArchive, eraseTenant } from 'tidewater/archive';
import { useLocalAws } from 'tidewater/local/vitest';
import { S3ArchiveSink } from 'tidewater/s3';
import { createLambdaContext, streamEvents } from 'tidewater/testing';
import { beforeAll, expect, it } from 'vitest';
import { tidewaterCli } from './support/tidewater-cli.js';

const BUCKET = 'orders-history';
const TABLE = 'orders-history';
const COPY = 'orders-history-copy';
const VERSIONS = 'orders-history-versions';
const TENANTS = ['acme', 'globex', 'initech'] as const;
const DAY = { from: '2026-01-02T00:00:00Z', to: '2026-01-03T00:00:00Z' };
const STEPS = 720; // one change every 2 minutes for a day

const local = useLocalAws({ buckets: [BUCKET] });

/** A 38-digit amount: what a DOUBLE, or JavaScript's number, would round. */
const amount = (step: number) => 12345678901234567890123456789012345678n - BigInt(step);

interface Change {
  kind: 'insert' | 'modify' | 'user-delete' | 'ttl-delete';
  tenant: string;
  pk: string;
  step: number;
}

/**
 * The day's changes as a deterministic walk over 10 orders per tenant: an absent order is
 * inserted, a present one is modified (7 in 10), deleted by a user or expired by TTL. `source`
 * ends as the table does.
 */
function day(): { changes: Change[]; records: LambdaStreamRecord[]; source: Map<string, Item> } {
  let clock = Date.parse(DAY.from) / 1000;
  const events = streamEvents({ tableName: TABLE, keyAttributes: ['pk'], now: () => clock });
  const source = new Map<string, Item>();
  const changes: Change[] = [];
  const records: LambdaStreamRecord[] = [];
  let seed = 7;
  const next = () => {
    seed = (seed * 48_271) % 2_147_483_647; // Park–Miller: exact in a double
    return seed;
  };
  for (let step = 0; step < STEPS; step++) {
    clock = Date.parse(DAY.from) / 1000 + step * 120;
    const tenant = TENANTS[next() % TENANTS.length] as string;
    const pk = `${tenant}#order#${next() % 10}`;
    const old = source.get(pk);
    const item: Item = { pk, amount: amount(step), status: `s${step % 5}`, step, expiresAt: clock + 86_400 };
    const roll = next() % 10;
    let kind: Change['kind'];
    if (old === undefined) {
      kind = 'insert';
      records.push(events.insert(item));
      source.set(pk, item);
    } else if (roll < 7) {
      kind = 'modify';
      records.push(events.modify(old, item));
      source.set(pk, item);
    } else if (roll < 9) {
      kind = 'user-delete';
      records.push(events.userDelete(old));
      source.delete(pk);
    } else {
      kind = 'ttl-delete';
      records.push(events.ttlDelete(old));
      source.delete(pk);
    }
    changes.push({ kind, tenant, pk, step });
  }
  return { changes, records, source };
}

async function createTable(dynamodb: DynamoDBClient, name: string): Promise<void> {
  await dynamodb.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }),
  );
}

/** A table's items by key, in one canonical JSON text each. */
async function contents(dynamodb: DynamoDBClient, name: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const canonical = (value: Record<string, AttributeValue>) =>
    JSON.stringify(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)));
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({ TableName: name, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    for (const found of page.Items ?? []) out.set(found.pk!.S!, canonical(found));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return out;
}

/** The archive's Parquet objects copied under their keys, for DuckDB to read as files. */
async function copyParquet(s3: S3Client, dir: string): Promise<number> {
  let copied = 0;
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'changes', ContinuationToken: token }),
    );
    for (const { Key } of page.Contents ?? []) {
      if (!Key?.endsWith('.parquet')) continue;
      const body = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key }));
      const file = path.join(dir, Key);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, await body.Body!.transformToByteArray());
      copied++;
    }
    token = page.NextContinuationToken;
  } while (token !== undefined);
  return copied;
}

/** DuckDB over the copied Parquet objects: rows as DuckDB's own values, numbers as text. */
async function query(dir: string, sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(
      `CREATE VIEW changes AS SELECT * FROM read_parquet('${dir.replaceAll("'", "''")}/**/*.parquet', hive_partitioning = true)`,
    );
    return (await connection.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** `npx tidewater archive replay` as a user runs it; `killWhen` ends it with SIGKILL. */
function replay(checkpoint: string, killWhen?: () => boolean) {
  return tidewaterCli(
    [
      'archive',
      'replay',
      '-b',
      BUCKET,
      '-t',
      TABLE,
      '-p',
      'changes',
      '--from',
      DAY.from,
      '--to',
      DAY.to,
      '--handler',
      'src/handlers/copy.ts#handler',
      '--checkpoint',
      checkpoint,
      '--batch-size',
      '10',
      '--no-progress',
    ],
    killWhen,
  );
}

beforeAll(async () => {
  const { dynamodb } = local.current;
  await Promise.all([
    createTable(dynamodb, TABLE),
    createTable(dynamodb, COPY),
    createTable(dynamodb, VERSIONS),
  ]);
  // The copy handler's settings, read at import by the CLI's process; its guard orders by the
  // builder's whole-second creation times.
  Object.assign(process.env, {
    COPY_TABLE: COPY,
    COPY_VERSIONS_TABLE: VERSIONS,
    STREAM_TIME_RESOLUTION: '1',
  });
});

it('archives a day of every change, compacts it to Parquet, queries it with DuckDB, erases a tenant, and replays the rest into an equal table', async () => {
  const { dynamodb, s3 } = local.current;
  const { changes, records, source } = day();
  for (const item of source.values())
    await dynamodb.send(
      new PutItemCommand({ TableName: TABLE, Item: marshall(item) as Record<string, AttributeValue> }),
    );

  // The archive: every change, one tenant per object; a batch redelivered cut elsewhere.
  const handler = createStreamHandler({
    routes: [
      route({
        when: RECORD_KINDS,
        to: new S3ArchiveSink({
          client: s3,
          bucket: BUCKET,
          prefix: 'changes',
          partitionBy: tenantFromPartitionKey(),
        }),
      }),
    ],
    metrics: false,
  });
  const events = streamEvents({ tableName: TABLE });
  const deliver = async (batch: LambdaStreamRecord[]) =>
    expect(await handler(events.event(...batch), createLambdaContext())).toEqual({ batchItemFailures: [] });
  for (let i = 0; i < records.length; i += 40) await deliver(records.slice(i, i + 40));
  await deliver(records.slice(105, 145)); // a redelivery cut elsewhere: its objects repeat rows

  const range = { client: s3, bucket: BUCKET, prefix: 'changes', table: TABLE, ...DAY };
  const compacted = await compactArchive({
    ...range,
    format: 'parquet',
    typedColumns: { amount: 'number', status: 'string' },
  });
  // Each change once: the redelivery's copies found and dropped (those of a tenant whose rows in an
  // hour came out the same are the same object already, written once).
  expect(compacted.hours.reduce((n, h) => n + (h.duplicates ?? 0), 0)).toBeGreaterThan(0);
  expect(compacted.hours.reduce((n, h) => n + (h.rowsWritten ?? 0), 0)).toBe(STEPS);

  // DuckDB: counts by kind and tenant exactly as written, and a 38-digit amount exact.
  const before = mkdtempSync(path.join(tmpdir(), 'orders-history-'));
  expect(await copyParquet(s3, before)).toBeGreaterThan(0);
  const byKind = await query(
    before,
    'SELECT kind, count(*)::INTEGER AS n FROM changes GROUP BY kind ORDER BY kind',
  );
  const expectKinds = RECORD_KINDS.map((kind) => ({ kind, n: changes.filter((c) => c.kind === kind).length }))
    .filter(({ n }) => n > 0)
    .sort((a, b) => (a.kind < b.kind ? -1 : 1));
  expect(byKind).toEqual(expectKinds);
  const byTenant = await query(
    before,
    'SELECT tenant_id, count(*)::INTEGER AS n, count(DISTINCT hour)::INTEGER AS hours FROM changes GROUP BY tenant_id ORDER BY tenant_id',
  );
  const hoursOf = (tenant: string) =>
    new Set(changes.filter((c) => c.tenant === tenant).map((c) => Math.floor(c.step / 30))).size;
  expect(byTenant).toEqual(
    TENANTS.map((tenant) => ({
      tenant_id: tenant,
      n: changes.filter((c) => c.tenant === tenant).length,
      hours: hoursOf(tenant),
    })),
  );
  const last = changes.findLast((c) => c.kind === 'insert' || c.kind === 'modify') as Change;
  const exact = await query(
    before,
    `SELECT CAST(item_amount AS VARCHAR) AS typed, json_extract_string(new_image, '$.amount.N') AS text
       FROM changes WHERE pk = '${last.pk}' AND kind IN ('insert', 'modify') ORDER BY sequence_number DESC LIMIT 1`,
  );
  expect(exact).toEqual([{ typed: String(amount(last.step)), text: String(amount(last.step)) }]);

  // A tenant leaves: erased from the archive (and its orders from the table).
  const erased = await eraseTenant({ ...range, tenant: 'globex' });
  expect(erased.rowsErased).toBe(changes.filter((c) => c.tenant === 'globex').length);
  for (const pk of source.keys())
    if (pk.startsWith('globex#'))
      await dynamodb.send(new DeleteItemCommand({ TableName: TABLE, Key: { pk: { S: pk } } }));
  const after = mkdtempSync(path.join(tmpdir(), 'orders-history-'));
  await copyParquet(s3, after);
  expect(await query(after, "SELECT count(*)::INTEGER AS n FROM changes WHERE tenant_id = 'globex'")).toEqual(
    [{ n: 0 }],
  );
  expect(await query(after, 'SELECT count(*)::INTEGER AS n FROM changes')).toEqual([
    { n: changes.filter((c) => c.tenant !== 'globex').length },
  ]);

  // The history replayed into an empty table through the copy handler's versionGuard: killed
  // after its first checkpoint, then resumed.
  const checkpoint = path.join(mkdtempSync(path.join(tmpdir(), 'orders-replay-')), 'checkpoint.json');
  const progressed = () => existsSync(checkpoint) && readFileSync(checkpoint, 'utf8').length > 0;
  const killed = await replay(checkpoint, progressed);
  expect(killed.signal, killed.output).toBe('SIGKILL');
  const resumed = await replay(checkpoint);
  expect(resumed.code, resumed.output).toBe(0);

  const [table, copy] = await Promise.all([contents(dynamodb, TABLE), contents(dynamodb, COPY)]);
  expect(table.size).toBeGreaterThan(0);
  expect([...copy.keys()].sort()).toEqual([...table.keys()].sort());
  for (const [key, expected] of table) expect(copy.get(key), key).toBe(expected);
}, 600_000);
