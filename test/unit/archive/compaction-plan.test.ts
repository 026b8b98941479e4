import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CompactionSource, planCompaction, rowSetSha256 } from '../../../src/archive/compaction-plan.js';
import { decodeObject, parseArchiveKey } from '../../../src/archive/format.js';
import { planArchiveObjects } from '../../../src/archive/objects.js';
import { tenantFromPartitionKey, tenantOfSegment } from '../../../src/archive/partition.js';
import { parseStreamRecord } from '../../../src/records/parse.js';
import { tenantRecords } from '../../support/tenant-records.js';
import { compactionSource } from './compaction-source.js';

const partitionBy = tenantFromPartitionKey();
const records = tenantRecords(40, ['acme', 'globex', 'initech']);
const sink = { prefix: 'archive', ttlAttribute: 'ttl', maxObjectBytes: 1 << 24, table: undefined };
const hourOf = parseArchiveKey(planArchiveObjects(records.slice(0, 1), sink).objects[0]!.key)!;
const layout = { prefix: 'archive', table: hourOf.table, dt: hourOf.dt, hour: hourOf.hour };

/** The objects sink writes for these deliveries: each a window of the stream, some tenant-partitioned. */
function stored(windows: readonly [number, number, boolean][]): CompactionSource[] {
  const sources: CompactionSource[] = [];
  for (const [start, length, partitioned] of windows) {
    const batch = records.slice(start, start + length);
    const tenants = partitioned ? { partitionBy, maxPartitions: 2 } : undefined;
    sources.push(...planArchiveObjects(batch, { ...sink, tenants }).objects.map(compactionSource));
  }
  return sources;
}

const idOf = (row: { shard: string; sequenceNumber: string; eventID: string }) =>
  `${row.shard}/${row.sequenceNumber}/${row.eventID}`;

const deliveries = fc.array(fc.tuple(fc.nat(39), fc.integer({ min: 1, max: 15 }), fc.boolean()), {
  minLength: 1,
  maxLength: 8,
});
const bound = fc.constantFrom(400, 3_000, 1 << 24);

describe('planCompaction', () => {
  it('keeps the de-duplicated row set: every row once, in its tenant, in stream order, within the bound', () => {
    fc.assert(
      fc.property(deliveries, bound, (windows, maxObjectBytes) => {
        const sources = stored(windows);
        const plan = planCompaction(sources, { ...layout, maxObjectBytes, partitionBy });
        const distinct = new Set(sources.flatMap((s) => s.rows.map(idOf)));
        const written = plan.outputs.flatMap((o) => decodeObject(o.body, o.key));
        expect(written.map(idOf).sort()).toEqual([...distinct].sort());
        expect(plan.rowsWritten).toBe(distinct.size);
        expect(plan.duplicates).toBe(plan.rowsRead - distinct.size);
        expect(plan.rowSetSha256).toBe(rowSetSha256(distinct));
        expect(plan.unassigned).toBe(0);
        for (const output of plan.outputs) {
          const rows = decodeObject(output.body, output.key);
          const tenant = tenantOfSegment(output.tenant as string);
          expect(rows.every((r) => String(r.keys.pk?.S).startsWith(`${tenant}#`))).toBe(true);
          const sequences = rows.map((r) => BigInt(r.sequenceNumber));
          expect(sequences).toEqual([...sequences].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
          expect(output.first).toBe(rows[0]?.sequenceNumber);
          expect(output.last).toBe(rows.at(-1)?.sequenceNumber);
          const ndjson = gunzipSync(output.body).length;
          expect(ndjson <= maxObjectBytes || rows.length === 1).toBe(true);
          expect(parseArchiveKey(output.key)).toMatchObject({
            tenant: output.tenant,
            dt: layout.dt,
            hour: layout.hour,
          });
        }
      }),
      { numRuns: 60 },
    );
  });

  it('plans the same keys and bytes whatever order the objects are read in, and again over its own output', () => {
    fc.assert(
      fc.property(deliveries, bound, fc.integer(), (windows, maxObjectBytes, seed) => {
        const sources = stored(windows);
        const shuffled = [...sources].sort(
          (a, b) =>
            ((a.key.length * 31 + seed) % 7) - ((b.key.length * 31 + seed) % 7) || (a.key < b.key ? 1 : -1),
        );
        const once = planCompaction(sources, { ...layout, maxObjectBytes, partitionBy });
        const again = planCompaction(shuffled, { ...layout, maxObjectBytes, partitionBy });
        const keys = (p: typeof once) => p.outputs.map((o) => [o.key, o.sha256]);
        expect(keys(again)).toEqual(keys(once));
        // Compacting a compacted hour changes nothing: the same keys, so nothing to put or delete.
        const compacted: CompactionSource[] = once.outputs.map((o) => ({
          key: o.key,
          tenant: o.tenant,
          shard: o.shard,
          rows: decodeObject(o.body, o.key),
        }));
        const twice = planCompaction(compacted, { ...layout, maxObjectBytes, partitionBy });
        expect(keys(twice)).toEqual(keys(once));
        expect(twice.duplicates).toBe(0);
      }),
      { numRuns: 40 },
    );
  });

  it('without partitionBy keeps unpartitioned rows unpartitioned, and a row stored both ways with its tenant', () => {
    const sources = stored([
      [0, 10, true],
      [0, 10, false],
    ]);
    const plan = planCompaction(sources, { ...layout, maxObjectBytes: 1 << 24 });
    expect(plan.rowsWritten).toBe(10);
    expect(plan.duplicates).toBe(10);
    // maxPartitions 2: acme and globex got their own objects; initech's rows were unpartitioned.
    expect(plan.outputs.map((o) => o.tenant ?? '(mixed)').sort()).toEqual(['(mixed)', 'acme', 'globex']);
    const mixed = plan.outputs.find((o) => o.tenant === undefined)!;
    expect(decodeObject(mixed.body, mixed.key).every((r) => r.keys.pk?.S?.startsWith('initech#'))).toBe(true);
  });

  it('keeps a row partitionBy cannot place, unpartitioned, and counts it', () => {
    const sources = stored([[0, 6, false]]);
    const plan = planCompaction(sources, {
      ...layout,
      maxObjectBytes: 1 << 24,
      partitionBy: (record) => {
        if (record.sequenceNumber === records[3]!.sequenceNumber) throw new Error('unknown');
        return partitionBy(record);
      },
    });
    expect(plan.unassigned).toBe(1);
    expect(plan.rowsWritten).toBe(6);
    const mixed = plan.outputs.filter((o) => o.tenant === undefined);
    expect(mixed.map((o) => o.rows)).toEqual([1]);
  });

  it('puts the rows of one item in one tenant whatever spelling their number key arrived in', () => {
    const byNumber = tenantFromPartitionKey();
    const spelled = ['7.50', '7.5', '75E-1'].map((n, i) => {
      const raw = records[i]!.raw;
      return parseStreamRecord({ ...raw, dynamodb: { ...raw.dynamodb, Keys: { pk: { N: n } } } });
    });
    const sources = planArchiveObjects(spelled, sink).objects.map(compactionSource);
    const plan = planCompaction(sources, { ...layout, maxObjectBytes: 1 << 24, partitionBy: byNumber });
    expect(plan.unassigned).toBe(0);
    expect(plan.outputs.map((o) => [o.tenant, o.rows])).toEqual([['7.5', 3]]);
  });
});
