/**
 * Parquet against NDJSON+gzip for the compacted archive (issue 39 §3), per million TTL deletes
 * spread over one day, ten tenants: bytes stored, compaction CPU (decoding the sinks' objects and
 * writing the hour's compacted objects), and the bytes DuckDB reads from disk for one tenant-day
 * query (the process's `rchar` around the query, Linux's /proc/self/io: every byte read through
 * read(2)/pread(2), the files' and nothing cached away).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { planCompaction } from '../../src/archive/compaction-plan.js';
import {
  type ArchiveRow,
  decodeObject,
  encodeObject,
  objectKey,
  toArchiveRow,
} from '../../src/archive/format.js';
import { DEFAULT_KEY_ATTRIBUTES } from '../../src/archive/parquet-columns.js';
import { parquetEncoder } from '../../src/archive/parquet-object.js';
import { tenantSegment } from '../../src/archive/partition.js';
import { NDJSON_ENCODER, type ObjectEncoder } from '../../src/archive/rewritten-object.js';
import { sampleTtlDeletes } from '../../src/sinks/sample-records.js';
import { bytes, fixed, table } from '../lib/markdown.js';

const MILLION = 1_000_000;
const TENANTS = 10;
const HOURS = 24;
const DAY = '2026-01-15';
const START = Date.parse(`${DAY}T00:00:00Z`) / 1000;

interface Source {
  key: string;
  tenant: string;
  shard: string;
  body: Buffer;
}

function partitionOf(tenant: string, hour: string) {
  return { table: 'orders', dt: DAY, hour, shard: 'shardId-000000000001', tenant: tenantSegment(tenant) };
}

/** The sinks' objects of the day: one per tenant-hour, batches of 100 (the sink's usual cut). */
function sinkObjects(count: number): Source[] {
  const spacing = (HOURS * 3600) / count;
  const records = sampleTtlDeletes(count, { firstTime: START, spacingSeconds: spacing, table: 'orders' });
  const groups = new Map<string, { tenant: string; hour: string; rows: ArchiveRow[] }>();
  records.forEach((record, i) => {
    const tenant = `tenant-${i % TENANTS}`;
    const hour = new Date((record.approximateCreationTime as number) * 1000).toISOString().slice(11, 13);
    const partition = partitionOf(tenant, hour);
    const row = toArchiveRow(record, partition, 'ttl', tenant);
    const id = `${tenant}/${hour}`;
    const group = groups.get(id) ?? { tenant, hour, rows: [] };
    group.rows.push(row);
    groups.set(id, group);
  });
  const sources: Source[] = [];
  for (const { tenant, hour, rows } of groups.values()) {
    for (let i = 0; i < rows.length; i += 100) {
      const batch = rows.slice(i, i + 100);
      const partition = partitionOf(tenant, hour);
      const key = objectKey(
        'archive',
        partition,
        (batch[0] as ArchiveRow).sequenceNumber,
        (batch.at(-1) as ArchiveRow).sequenceNumber,
      );
      sources.push({
        key,
        tenant: tenantSegment(tenant),
        shard: partition.shard,
        body: encodeObject(batch.map((r) => `${JSON.stringify(r)}\n`)).body,
      });
    }
  }
  return sources;
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Compacts every hour of the day with one encoder; the compacted objects and the CPU it took. */
function compactDay(sources: readonly Source[], encoder: ObjectEncoder) {
  const started = cpuMs();
  const outputs: { key: string; body: Buffer }[] = [];
  for (let h = 0; h < HOURS; h++) {
    const hour = String(h).padStart(2, '0');
    const inHour = sources
      .filter((s) => s.key.includes(`/hour=${hour}/`))
      .map((s) => ({ key: s.key, tenant: s.tenant, shard: s.shard, rows: decodeObject(s.body, s.key) }));
    const plan = planCompaction(inHour, {
      prefix: 'archive',
      table: 'orders',
      dt: DAY,
      hour,
      maxObjectBytes: 16 * 1024 * 1024,
      encoder,
    });
    outputs.push(...plan.outputs);
  }
  return { outputs, cpuMs: cpuMs() - started };
}

const rchar = () => Number(/rchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? Number.NaN);

async function bytesRead(statement: string): Promise<{ bytes: number; rows: number }> {
  const db = await DuckDBInstance.create(':memory:');
  const sql = await db.connect();
  try {
    const before = rchar();
    const result = await sql.runAndReadAll(statement);
    return { bytes: rchar() - before, rows: result.currentRowCount };
  } finally {
    sql.closeSync();
    db.closeSync();
  }
}

export default {
  name: 'archive-parquet',
  title: 'Parquet against NDJSON+gzip: compacted archive per 1M records',
  async run({ quick, log }: { quick: boolean; log: (m: string) => void }) {
    const count = quick ? 24_000 : 120_000;
    const scale = MILLION / count;
    const sources = sinkObjects(count);
    log(`${sources.length} sink objects of ${count} records`);
    const ndjson = compactDay(sources, NDJSON_ENCODER);
    const parquet = compactDay(
      sources,
      parquetEncoder({
        keyAttributes: DEFAULT_KEY_ATTRIBUTES,
        typedColumns: { amount: 'number', ratio: 'number' },
      }),
    );
    const dir = join(tmpdir(), `tidewater-bench-parquet-${process.pid}`);
    try {
      for (const [name, run] of [
        ['ndjson', ndjson],
        ['parquet', parquet],
      ] as const) {
        for (const output of run.outputs) {
          const file = join(dir, name, output.key);
          mkdirSync(dirname(file), { recursive: true });
          writeFileSync(file, output.body);
        }
      }
      const tenant = 'tenant-3';
      // One tenant-day, every expired item with its 38-digit amount, as Athena's projection would
      // prune it: NDJSON by the tenant folders, Parquet by hive partitions and the columns read.
      const q = {
        ndjson:
          await bytesRead(`SELECT json_extract_string(keys, '$.pk.S') AS pk, json_extract_string(oldImage, '$.amount.N') AS amount
          FROM read_ndjson('${dir}/ndjson/archive/table=orders/dt=${DAY}/hour=*/tenant=${tenant}/*/*.ndjson.gz', compression = 'gzip', hive_partitioning = false, columns = {keys: 'JSON', oldImage: 'JSON'})`),
        parquet: await bytesRead(`SELECT pk, item_amount AS amount
          FROM read_parquet('${dir}/parquet/archive/**/*.parquet', hive_partitioning = true)
          WHERE tenant = '${tenant}' AND dt = '${DAY}'`),
      };
      const stored = {
        ndjson: ndjson.outputs.reduce((n, o) => n + o.body.length, 0),
        parquet: parquet.outputs.reduce((n, o) => n + o.body.length, 0),
      };
      const rows = [
        ['NDJSON + gzip', ndjson, stored.ndjson, q.ndjson] as const,
        ['Parquet (gzip pages, typed amount/ratio)', parquet, stored.parquet, q.parquet] as const,
      ].map(([label, run, size, query]) => [
        label,
        bytes(size * scale),
        `${fixed((run.cpuMs * scale) / 1000, 1)} s`,
        bytes(query.bytes * scale),
        String(Math.round(query.rows * scale).toLocaleString('en-US')),
      ]);
      const markdown = [
        `${count.toLocaleString('en-US')} TTL deletes over one day and ${TENANTS} tenants (the sample records: 38-digit numbers, binary, sets, nested maps), scaled to 1M; compaction CPU includes decoding the sinks' NDJSON objects.`,
        '',
        table(
          ['format', 'bytes stored', 'compaction CPU', 'DuckDB bytes read, one tenant-day', 'rows returned'],
          rows,
        ),
        '',
        `Parquet stores ${fixed(stored.parquet / stored.ndjson, 2)}× the NDJSON+gzip bytes, costs ${fixed(parquet.cpuMs / ndjson.cpuMs, 2)}× its compaction CPU, and a tenant-day query reads ${fixed(q.parquet.bytes / q.ndjson.bytes, 2)}× the bytes.`,
      ].join('\n');
      return {
        markdown,
        data: { count, stored, cpuMs: { ndjson: ndjson.cpuMs, parquet: parquet.cpuMs }, query: q },
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
