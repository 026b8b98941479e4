/**
 * What tenant partitions cost in PUTs: each distinct tenant of a batch is one more object. The
 * sink's own planner (planArchiveObjects) is run on batches of realistic records whose partition
 * key leads with a tenant id (reference 004), tenants drawn uniformly per record, and the object
 * count per batch is scaled to 1M records. Then what compaction does with a day of them: the
 * compaction planner on one real hour, scaled to 24 hours.
 */
import { planCompaction } from '../../src/archive/compaction-plan.js';
import { decodeObject, parseArchiveKey } from '../../src/archive/format.js';
import { DEFAULT_MAX_OBJECT_BYTES, planArchiveObjects } from '../../src/archive/objects.js';
import { DEFAULT_MAX_PARTITIONS_PER_BATCH, tenantFromPartitionKey } from '../../src/archive/partition.js';
import { parseStreamEvent } from '../../src/records/index.js';
import type { ClassifiedRecord } from '../../src/records/types.js';
import { sampleTtlDeleteRecords } from '../../src/sinks/sample-records.js';
import { createRandom } from '../lib/random.js';

const RECORDS = 1_000_000;
const HOUR_S = 3600;
const FIRST = Date.UTC(2026, 0, 15, 10) / 1000;
const partitionBy = tenantFromPartitionKey();

/** `count` records from `start`, 1 s apart within one hour, each of a tenant drawn from `tenants`. */
function batch(
  start: number,
  count: number,
  tenants: number,
  random: ReturnType<typeof createRandom>,
): ClassifiedRecord[] {
  const raw = sampleTtlDeleteRecords(count, {
    start,
    firstTime: FIRST + (start % HOUR_S),
    spacingSeconds: 0,
  }).map((record) => {
    const pk = { S: `tenant-${random.int(0, tenants - 1)}#${record.dynamodb.Keys.pk?.S}` };
    return { ...record, dynamodb: { ...record.dynamodb, Keys: { ...record.dynamodb.Keys, pk } } };
  });
  return parseStreamEvent({ Records: raw });
}

interface Row {
  tenants: number;
  batch: number;
  bound: number | 'none';
  putsPerBatch: number;
  putsPerMillion: number;
  /** Share of records filed unpartitioned because their batch had more tenants than the bound. */
  unpartitioned: number;
}

const layout = {
  prefix: 'archive',
  ttlAttribute: 'ttl',
  maxObjectBytes: DEFAULT_MAX_OBJECT_BYTES,
  table: undefined,
};

function measure(tenants: number, size: number, bound: number, batches: number): Omit<Row, 'bound'> {
  const random = createRandom(tenants * 7919 + size);
  let objects = 0;
  let overflow = 0;
  for (let b = 0; b < batches; b++) {
    const plan = planArchiveObjects(batch(b * size, size, tenants, random), {
      ...layout,
      tenants: { partitionBy, maxPartitions: bound },
    });
    objects += plan.objects.length;
    overflow += plan.overflow;
  }
  const putsPerBatch = objects / batches;
  return {
    tenants,
    batch: size,
    putsPerBatch,
    putsPerMillion: Math.round((putsPerBatch * RECORDS) / size),
    unpartitioned: overflow / (batches * size),
  };
}

/** One hour as the sink leaves it (batches of 100, tenant-partitioned), then compacted. */
function compactedHour(tenants: number, perHour: number): { before: number; after: number } {
  const random = createRandom(tenants);
  const sources = [];
  for (let start = 0; start < perHour; start += 100) {
    const { objects } = planArchiveObjects(batch(start, Math.min(100, perHour - start), tenants, random), {
      ...layout,
      tenants: { partitionBy, maxPartitions: DEFAULT_MAX_PARTITIONS_PER_BATCH },
    });
    for (const o of objects) {
      const parts = parseArchiveKey(o.key);
      sources.push({
        key: o.key,
        tenant: parts?.tenant,
        shard: parts?.shard ?? '',
        rows: decodeObject(o.body, o.key),
      });
    }
  }
  const plan = planCompaction(sources, {
    prefix: 'archive',
    table: 'archive-sample',
    dt: '2026-01-15',
    hour: '10',
    maxObjectBytes: DEFAULT_MAX_OBJECT_BYTES,
    partitionBy,
  });
  return { before: sources.length, after: plan.outputs.length };
}

const n = (value: number) => Math.round(value).toLocaleString('en-US');

export default {
  name: 'archive-tenants',
  title: 'Tenant partitions: PUTs per 1M records',
  async run({
    quick,
    log,
  }: {
    quick: boolean;
    log: (m: string) => void;
  }): Promise<{ markdown: string; data: unknown }> {
    const rows: Row[] = [];
    for (const size of [100, 1_000]) {
      for (const tenants of [1, 10, 1_000]) {
        const batches = quick ? (size === 100 ? 40 : 8) : size === 100 ? 400 : 60;
        for (const bound of [DEFAULT_MAX_PARTITIONS_PER_BATCH, 10_000]) {
          // Without more tenants or records than the bound, no bound changes nothing: one row.
          const reached =
            tenants > DEFAULT_MAX_PARTITIONS_PER_BATCH && size > DEFAULT_MAX_PARTITIONS_PER_BATCH;
          if (bound === 10_000 && !reached) continue;
          const row = {
            ...measure(tenants, size, bound, batches),
            bound: bound === 10_000 ? ('none' as const) : bound,
          };
          rows.push(row);
          log(
            `batch ${size}, ${tenants} tenants, bound ${row.bound}: ${row.putsPerBatch.toFixed(1)} PUTs per batch`,
          );
        }
      }
    }
    // A day of 1M records is ~41,700 an hour; quick mode plans a smaller hour (the count is per tenant).
    const perHour = quick ? 5_000 : Math.round(RECORDS / 24);
    const day = [1, 10, 1_000].map((tenants) => ({ tenants, ...compactedHour(tenants, perHour) }));
    for (const d of day)
      log(`an hour of ${perHour} records, ${d.tenants} tenants: ${d.before} objects → ${d.after}`);

    const lines = [
      `PUTs the S3 archive sink makes per 1,000,000 records, each record's tenant drawn uniformly (\`partitionBy: tenantFromPartitionKey()\`), ` +
        "one hour and one shard per batch (the steady state). Measured by the sink's own planner; a PUT also makes an object.",
      '',
      '| tenants | batch | maxPartitionsPerBatch | PUTs per batch | PUTs per 1M records | records filed unpartitioned |',
      '|--:|--:|--:|--:|--:|--:|',
      ...rows.map(
        (r) =>
          `| ${n(r.tenants)} | ${n(r.batch)} | ${r.bound === 'none' ? 'no bound' : n(r.bound)} | ${r.putsPerBatch.toFixed(1)} | ${n(r.putsPerMillion)} | ${(r.unpartitioned * 100).toFixed(1)}% |`,
      ),
      '',
      `Compaction of one hour (${n(perHour)} records written in batches of 100, tenant-partitioned, the default bound): ` +
        'objects before and after. One object per tenant (per shard segment) and hour is the floor; a day is 24 hours of it.',
      '',
      '| tenants | objects in the hour as written | after compaction | objects per day after compaction |',
      '|--:|--:|--:|--:|',
      ...day.map((d) => `| ${n(d.tenants)} | ${n(d.before)} | ${n(d.after)} | ${n(d.after * 24)} |`),
      '',
      'Every distinct tenant of a batch is one more PUT: with 1,000 tenants a batch of 1,000 records touches ~630 of them. ' +
        'The bound caps a batch at maxPartitionsPerBatch + 1 objects per hour and shard (the rest share the unpartitioned ' +
        'object, which compaction with partitionBy splits later); compaction brings every hour back to one object per tenant.',
    ];
    return { markdown: lines.join('\n'), data: { records: RECORDS, rows, compaction: { perHour, day } } };
  },
};
