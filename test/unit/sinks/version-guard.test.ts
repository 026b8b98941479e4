import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { createRecordParser } from '../../../src/records/parse.js';
import type { AttributeMap, ClassifiedRecord, LambdaStreamRecord } from '../../../src/records/types.js';
import {
  MemorySink,
  MemoryVersionStore,
  VersionConflictError,
  versionGuard,
} from '../../../src/sinks/index.js';
import { itemKeyOf } from '../../../src/sinks/record-version.js';
import { runSinkTestKit } from '../../../src/sinks/testkit.js';
import type { Sink } from '../../../src/sinks/types.js';
import type { VersionStore } from '../../../src/sinks/version-store.js';
import { ItemStateSink } from '../../support/item-state-sink.js';

// The kit: a guarded MemorySink stores every record once, in order, and survives redelivery.
const inner = new WeakMap<Sink, MemorySink>();
const failOnce = new WeakMap<Sink, Set<string>>();
runSinkTestKit({
  name: 'versionGuard(MemorySink, MemoryVersionStore)',
  create: () => {
    const fail = new Set<string>();
    const memory = new MemorySink({ failWhen: (r) => fail.delete(r.sequenceNumber) });
    const guarded = versionGuard(memory, { store: new MemoryVersionStore() });
    inner.set(guarded, memory);
    failOnce.set(guarded, fail);
    return guarded;
  },
  read: (sink) => inner.get(sink)?.records ?? [],
  injectFailures: (sink, sequenceNumbers) => {
    for (const seq of sequenceNumbers) failOnce.get(sink)?.add(seq);
  },
});

/** One write to the table: a new state of an item, or its delete, at `at` (epoch ms). */
interface Write {
  item: number;
  at: number;
  deleted: boolean;
}

const BASE_MS = 1_767_225_600_000; // 2026-01-01T00:00:00Z

function keysOf(item: number): AttributeMap {
  return { pk: { S: `item#${item}` } };
}

function imageOf(item: number, state: number): AttributeMap {
  return {
    ...keysOf(item),
    state: { N: `1234567890123456789012345678901234567${state % 10}` },
    n: { N: String(state) },
  };
}

/** The stream's record of write `index` (its sequence number the write's place: one shard, in order). */
function streamRecord(writes: readonly Write[], index: number): LambdaStreamRecord {
  const w = writes[index] as Write;
  const before = writes.slice(0, index).findLast((p) => p.item === w.item);
  const existed = before !== undefined && !before.deleted;
  return {
    eventID: `s${index}`,
    eventName: w.deleted ? 'REMOVE' : existed ? 'MODIFY' : 'INSERT',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(w.at / 1000),
      Keys: keysOf(w.item),
      ...(w.deleted ? {} : { NewImage: imageOf(w.item, index) }),
      ...(existed ? { OldImage: imageOf(w.item, writes.indexOf(before)) } : {}),
      SequenceNumber: String(100_000_000_000_000_000_000n + BigInt(index)),
    },
  };
}

/** Each item's state after the writes up to `until` (ms, inclusive): what an export at `until` holds. */
function tableAt(writes: readonly Write[], until: number): Map<number, AttributeMap> {
  const table = new Map<number, AttributeMap>();
  writes.forEach((w, index) => {
    if (w.at > until) return;
    if (w.deleted) table.delete(w.item);
    else table.set(w.item, imageOf(w.item, index));
  });
  return table;
}

const scenario = fc
  .record({
    // Writes within a few seconds of each other, so snapshot and stream share seconds often.
    writes: fc.array(
      fc.record({
        item: fc.integer({ min: 0, max: 4 }),
        gap: fc.integer({ min: 0, max: 700 }),
        deleted: fc.boolean(),
      }),
      { minLength: 1, maxLength: 30 },
    ),
    snapshotAt: fc.integer({ min: 0, max: 10_000 }),
  })
  .map(({ writes, snapshotAt }) => {
    let at = BASE_MS + 999 - 500; // mid-second start
    const timed = writes.map((w) => {
      at += w.gap;
      return { item: w.item, at, deleted: w.deleted };
    });
    return { writes: timed, snapshot: BASE_MS + snapshotAt };
  });

describe('versionGuard: backfill and stream in any order', () => {
  it('ends with each item as the table holds it, however the copies and the stream interleave, repeat and fail', async () => {
    await fc.assert(
      fc.asyncProperty(
        scenario,
        fc.integer({ min: 0, max: 1_000 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.constantFrom(1, 60),
        async ({ writes, snapshot }, startPick, copyPicks, mergePicks, batchSizes, failPicks, resolution) => {
          const parseStream = createRecordParser();
          const parseCopy = createRecordParser({
            origin: { source: 'backfill', from: 'export', snapshotTime: snapshot },
          });
          // The stream consumer starts at TRIM_HORIZON or later, but no later than the first write after the snapshot.
          const firstAfter = writes.findIndex((w) => w.at > snapshot);
          const lastStart = firstAfter < 0 ? writes.length : firstAfter;
          const start = startPick % (lastStart + 1);
          const stream = writes.map((_, i) => parseStream(streamRecord(writes, i))).slice(start);
          // The export at the snapshot, each copy delivered once or more, in any order.
          const exported = [...tableAt(writes, snapshot)].map(([item, image], n) =>
            parseCopy({
              eventID: `b${n}`,
              eventName: 'INSERT',
              dynamodb: {
                ApproximateCreationDateTime: snapshot / 1000,
                Keys: keysOf(item),
                NewImage: image,
                SequenceNumber: String(n + 1),
              },
            }),
          );
          const copies = [...exported];
          for (const pick of copyPicks)
            if (exported.length > 0) copies.push(exported[pick % exported.length] as ClassifiedRecord);
          for (let i = copies.length - 1; i > 0; i--) {
            const j = (copyPicks[i % Math.max(copyPicks.length, 1)] ?? i) % (i + 1);
            [copies[i], copies[j]] = [copies[j] as ClassifiedRecord, copies[i] as ClassifiedRecord];
          }
          // Interleave: the stream in order, the copies anywhere.
          const merged: ClassifiedRecord[] = [];
          let s = 0;
          let c = 0;
          let m = 0;
          while (s < stream.length || c < copies.length) {
            const takeCopy =
              c < copies.length &&
              (s >= stream.length || (mergePicks[m++ % Math.max(mergePicks.length, 1)] ?? 0) % 2 === 0);
            merged.push((takeCopy ? copies[c++] : stream[s++]) as ClassifiedRecord);
          }
          const sink = new ItemStateSink();
          for (const pick of failPicks)
            if (merged.length > 0)
              sink.failNext.add((merged[pick % merged.length] as ClassifiedRecord).sequenceNumber);
          const guarded = versionGuard(sink, {
            store: new MemoryVersionStore(),
            creationTimeResolution: resolution,
          });
          // Batches as Lambda cuts them; a failure redelivers the batch from its lowest failed record (at least once).
          let at = 0;
          let b = 0;
          let rounds = 0;
          while (at < merged.length) {
            const batch = merged.slice(at, at + (batchSizes[b++ % batchSizes.length] as number));
            const result = await guarded.write(batch, {});
            const failed = new Set((result?.failed ?? []).map((f) => f.sequenceNumber));
            const lowest = batch.findIndex((r) => failed.has(r.sequenceNumber));
            at += lowest < 0 ? batch.length : lowest;
            expect(++rounds).toBeLessThan(1_000);
          }
          const keyText = (item: number) =>
            itemKeyOf(
              parseStream({
                eventID: 'k',
                eventName: 'INSERT',
                dynamodb: { Keys: keysOf(item), SequenceNumber: '1' },
              }),
            );
          const expected = new Map(
            [...tableAt(writes, Number.POSITIVE_INFINITY)].map(([item, image]) => [keyText(item), image]),
          );
          expect(sink.items).toEqual(expected);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('skips a copy older than a delete: the tombstone keeps the item deleted', async () => {
    const parseStream = createRecordParser();
    const copy = createRecordParser({ origin: { source: 'backfill', from: 'scan', snapshotTime: BASE_MS } })({
      eventID: 'b1',
      eventName: 'INSERT',
      dynamodb: {
        ApproximateCreationDateTime: BASE_MS / 1000,
        Keys: keysOf(1),
        NewImage: imageOf(1, 1),
        SequenceNumber: '1',
      },
    });
    const sink = new ItemStateSink();
    const store = new MemoryVersionStore();
    const guarded = versionGuard(sink, { store });
    const writes: Write[] = [
      { item: 1, at: BASE_MS - 5_000, deleted: false },
      { item: 1, at: BASE_MS + 2_000, deleted: true },
    ];
    await guarded.write([parseStream(streamRecord(writes, 0)), parseStream(streamRecord(writes, 1))], {});
    await guarded.write([copy], {});
    expect(sink.items.size).toBe(0);
    expect(sink.written.map((r) => r.eventID)).toEqual(['s0', 's1']);
    expect(store.tombstones()).toEqual([itemKeyOf(copy)]);
  });

  it('writes a record again after the sink failed it: its version is committed only once written', async () => {
    const parseStream = createRecordParser();
    const writes: Write[] = [{ item: 2, at: BASE_MS, deleted: false }];
    const record = parseStream(streamRecord(writes, 0));
    const sink = new ItemStateSink();
    sink.failNext.add(record.sequenceNumber);
    const guarded = versionGuard(sink, { store: new MemoryVersionStore() });
    expect((await guarded.write([record], {}))?.failed?.map((f) => f.sequenceNumber)).toEqual([
      record.sequenceNumber,
    ]);
    expect(await guarded.write([record], {})).toEqual({});
    expect(sink.items.get(itemKeyOf(record))).toEqual(imageOf(2, 0));
  });

  it('reports a commit another writer got ahead of as VersionConflictError, for the record to be checked again', async () => {
    const parseStream = createRecordParser();
    const record = parseStream(streamRecord([{ item: 3, at: BASE_MS, deleted: false }], 0));
    // A store whose commit loses: another writer committed a newer version in between.
    const store: VersionStore = { get: async () => new Map(), commit: async () => false };
    const result = await versionGuard(new ItemStateSink(), { store }).write([record], {});
    expect(result?.failed?.[0]?.error).toBeInstanceOf(VersionConflictError);
    expect(result?.failed?.[0]?.sequenceNumber).toBe(record.sequenceNumber);
  });

  it('fails loudly on a missing store or an unknown option', () => {
    expect(() => versionGuard(new ItemStateSink(), {} as never)).toThrow(InvalidOptionsError);
    expect(() =>
      versionGuard(new ItemStateSink(), { store: new MemoryVersionStore(), stor: 1 } as never),
    ).toThrow(/unknown option 'stor'/);
  });
});
