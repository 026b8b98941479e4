import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CompactionSource, planCompaction } from '../../../src/archive/compaction-plan.js';
import { type ArchiveRow, decodeObject, parseArchiveKey } from '../../../src/archive/format.js';
import { planArchiveObjects } from '../../../src/archive/objects.js';
import { tenantFromPartitionKey } from '../../../src/archive/partition.js';
import { sampleChanges } from '../../../src/sinks/sample-records.js';
import { compactionSource } from './compaction-source.js';

// A change log holds many rows per item: compaction must keep every change of an item (one per
// eventID), never one row per item, whatever the overlapping redeliveries stored.

const partitionBy = tenantFromPartitionKey();
// 120 changes 20 s apart, all in one hour, of items of three tenants: few items, many changes each.
const changes = sampleChanges(120, {
  tenants: ['acme', 'globex', 'initech'],
  liveItems: 6,
  spacingSeconds: 20,
});
const sink = { prefix: 'archive/changes', ttlAttribute: 'ttl', maxObjectBytes: 1 << 24, table: undefined };
const hourOf = parseArchiveKey(planArchiveObjects(changes.slice(0, 1), sink).objects[0]!.key)!;
const layout = { prefix: sink.prefix, table: hourOf.table, dt: hourOf.dt, hour: hourOf.hour, partitionBy };

function stored(windows: readonly [number, number, boolean][]): CompactionSource[] {
  return windows.flatMap(([start, length, partitioned]) =>
    planArchiveObjects(changes.slice(start, start + length), {
      ...sink,
      tenants: partitioned ? { partitionBy, maxPartitions: 2 } : undefined,
    }).objects.map(compactionSource),
  );
}

const itemOf = (row: ArchiveRow) => `${row.keys.pk?.S}/${row.keys.sk?.S}`;

describe('planCompaction over a change log', () => {
  it('keeps every distinct change of every item once, each item in stream order, images as written', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(119), fc.integer({ min: 1, max: 40 }), fc.boolean()), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.constantFrom(2_000, 1 << 24),
        (windows, maxObjectBytes) => {
          const sources = stored(windows);
          // Copies of a change differ only in `tenant` (absent where the window was unpartitioned):
          // compaction keeps the copy that has it.
          const delivered = new Map<string, ArchiveRow>();
          for (const row of sources.flatMap((s) => s.rows))
            if (delivered.get(row.eventID)?.tenant === undefined) delivered.set(row.eventID, row);
          const plan = planCompaction(sources, { ...layout, maxObjectBytes });
          const written = plan.outputs.flatMap((o) => decodeObject(o.body, o.key));
          // Every change once: by eventID, and with the row as the sink wrote it.
          expect(written.map((r) => r.eventID).sort()).toEqual([...delivered.keys()].sort());
          for (const row of written) expect(row).toEqual(delivered.get(row.eventID));
          // Per item, the changes in the order they happened (the item's sequence numbers rise).
          const perItem = new Map<string, bigint[]>();
          for (const row of written)
            perItem.set(itemOf(row), [...(perItem.get(itemOf(row)) ?? []), BigInt(row.sequenceNumber)]);
          const expected = new Map<string, bigint[]>();
          for (const record of changes)
            if (delivered.has(record.eventID)) {
              const row = delivered.get(record.eventID)!;
              expected.set(itemOf(row), [...(expected.get(itemOf(row)) ?? []), BigInt(row.sequenceNumber)]);
            }
          expect(perItem).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps an item of many changes whole: more rows than items, no row collapsed into another', () => {
    const sources = stored([
      [0, 60, true],
      [30, 90, false],
      [0, 120, true],
    ]);
    const plan = planCompaction(sources, { ...layout, maxObjectBytes: 1 << 24 });
    const written = plan.outputs.flatMap((o) => decodeObject(o.body, o.key));
    expect(written).toHaveLength(120);
    expect(plan.duplicates).toBe(150);
    expect(new Set(written.map(itemOf)).size).toBeLessThan(60);
    expect(new Set(written.map((r) => r.kind))).toEqual(
      new Set(['insert', 'modify', 'ttl-delete', 'user-delete']),
    );
  });
});
