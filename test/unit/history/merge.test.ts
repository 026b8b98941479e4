import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ArchiveRow } from '../../../src/archive/format.js';
import {
  compareSequence,
  type MergeCounts,
  type MergeObject,
  mergeHour,
} from '../../../src/history/merge.js';

interface Change {
  readonly item: number;
  readonly shard: string;
  readonly row: ArchiveRow;
}

/** Changes in the order they happened: times never go back, sequence numbers grow (as a stream's do). */
function changesOf(spec: readonly { item: number; shard: number; tick: boolean }[]): Change[] {
  let seconds = 1_768_471_200;
  return spec.map(({ item, shard, tick }, i) => {
    if (tick) seconds++;
    const row = {
      eventID: `e${i}`,
      // Widths vary, as they do when a sequence number gains a digit: the merge compares by value.
      sequenceNumber: String(900 + i * 7),
      shard: `shard-${shard}`,
      approximateCreationDateTime: seconds,
      keys: { pk: { S: `item-${item}` } },
    } as unknown as ArchiveRow;
    return { item, shard: row.shard, row };
  });
}

/** A shard's changes cut into objects as Lambda's batches and cut redeliveries write them. */
function objectsOf(
  shardChanges: readonly Change[],
  cuts: readonly number[],
  redeliveries: readonly [number, number][],
): { object: MergeObject; rows: ArchiveRow[] }[] {
  const n = shardChanges.length;
  const points = [...new Set([0, ...cuts.map((c) => c % (n + 1)), n])].sort((a, b) => a - b);
  const ranges: [number, number][] = [];
  for (let i = 1; i < points.length; i++) ranges.push([points[i - 1] as number, points[i] as number]);
  for (const [a, b] of redeliveries) {
    const from = a % n;
    ranges.push([from, Math.min(n, from + 1 + (b % n))]);
  }
  return ranges
    .filter(([a, b]) => b > a)
    .map(([a, b], i) => {
      const rows = shardChanges.slice(a, b).map((c) => c.row);
      const first = rows[0] as ArchiveRow;
      return {
        object: {
          key: `${first.shard}/${first.sequenceNumber}-${i}`,
          shard: first.shard,
          first: first.sequenceNumber,
        },
        rows,
      };
    });
}

async function merged(objects: { object: MergeObject; rows: ArchiveRow[] }[], counts: MergeCounts) {
  const rowsOf = new Map(objects.map((o) => [o.object, o.rows]));
  const out: ArchiveRow[] = [];
  for await (const { row } of mergeHour(
    objects.map((o) => o.object),
    async (object) => rowsOf.get(object) as ArchiveRow[],
    counts,
  ))
    out.push(row);
  return out;
}

describe('mergeHour', () => {
  it('any split of a change sequence into overlapping objects: each change once, per item in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ item: fc.nat(5), shard: fc.nat(2), tick: fc.boolean() }), {
          minLength: 1,
          maxLength: 80,
        }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 6 }),
        fc.nat(),
        async (spec, cuts, redeliveries, shuffle) => {
          const changes = changesOf(spec);
          const objects = [...new Set(changes.map((c) => c.shard))].flatMap((shard) =>
            objectsOf(
              changes.filter((c) => c.shard === shard),
              cuts,
              redeliveries,
            ),
          );
          // The listing's order says nothing: rotate it.
          const listed = objects.map(
            (_, i) => objects[(i + shuffle) % objects.length] as (typeof objects)[0],
          );
          const counts: MergeCounts = { objects: 0, rows: 0, duplicates: 0 };
          const out = await merged(listed, counts);
          const copies = objects.reduce((n, o) => n + o.rows.length, 0);

          // Each change once, and (times never going back, sequence numbers growing) in the order it happened.
          expect(out.map((r) => r.eventID)).toEqual(changes.map((c) => c.row.eventID));
          for (const item of new Set(changes.map((c) => c.item))) {
            const mine = out.filter((r) => r.keys.pk?.S === `item-${item}`).map((r) => r.sequenceNumber);
            expect([...mine].sort(compareSequence)).toEqual(mine);
          }
          expect(counts).toEqual({
            objects: objects.length,
            rows: copies,
            duplicates: copies - changes.length,
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds only the objects that overlap: a later object is fetched once the merge reaches its first row', async () => {
    const changes = changesOf(Array.from({ length: 30 }, (_, i) => ({ item: i % 3, shard: 0, tick: true })));
    const objects = objectsOf(changes, [10, 20], []);
    const fetched: string[] = [];
    const seen: string[] = [];
    const rowsOf = new Map(objects.map((o) => [o.object.key, o.rows]));
    for await (const { row } of mergeHour(
      objects.map((o) => o.object),
      async (object) => {
        fetched.push(`${object.key}@${seen.length}`);
        return rowsOf.get(object.key) as ArchiveRow[];
      },
      { objects: 0, rows: 0, duplicates: 0 },
    ))
      seen.push(row.eventID);
    // Each object is opened when the rows before it are taken: never all at once.
    expect(fetched.map((f) => Number(f.split('@')[1]))).toEqual([0, 10, 20]);
  });

  it('a stand-in shard holding two shards whose sequence numbers meet keeps both changes, each once', async () => {
    const row = (eventID: string, seq: string) =>
      ({
        eventID,
        sequenceNumber: seq,
        shard: 'stream-x',
        approximateCreationDateTime: 1,
        keys: {},
      }) as unknown as ArchiveRow;
    const a = [row('a1', '100'), row('b1', '100'), row('a2', '101')];
    const b = [row('b1', '100'), row('a1', '100')];
    const objects = [
      { object: { key: 'k1', shard: 'stream-x', first: '100' }, rows: a },
      { object: { key: 'k2', shard: 'stream-x', first: '100' }, rows: b },
    ];
    const counts = { objects: 0, rows: 0, duplicates: 0 };
    const out = await merged(objects, counts);
    expect(out.map((r) => r.eventID).sort()).toEqual(['a1', 'a2', 'b1']);
    expect(counts.duplicates).toBe(2);
  });
});
