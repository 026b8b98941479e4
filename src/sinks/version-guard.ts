import pLimit from 'p-limit';
import { RecordError, recordLabel } from '../core/errors.js';
import { defineOptions } from '../core/options.js';
import { MalformedRecordError } from '../records/errors.js';
import type { ClassifiedRecord } from '../records/types.js';
import { itemKeyOf, type RecordVersion, recordVersion, UnversionedRecordError } from './record-version.js';
import type { Sink, SinkContext, SinkFailure, SinkResult } from './types.js';
import type { VersionStore } from './version-store.js';

/** Options of versionGuard: the version store, and the guarded sink's name. */
export interface VersionGuardOptions {
  /** Where the version of each item the sink holds is kept: `DynamoDbVersionStore` (`tidewater/version-store`) or `MemoryVersionStore`. */
  store: VersionStore;
  /** Default: the wrapped sink's name. */
  name?: string;
  /**
   * Seconds the stream's ApproximateCreationDateTime is rounded down to: 1 for DynamoDB Streams
   * (the default), 60 for DynamoDB Local, which rounds to the minute. Records and snapshots in the
   * same step are ordered by the tie rule (the stream wins), so a coarser setting is always safe.
   */
  creationTimeResolution?: number;
  /** Store commits in flight at once. Default 16. */
  concurrency?: number;
}

const readOptions = /* @__PURE__ */ defineOptions<VersionGuardOptions>()('versionGuard', {
  store: {
    kind: 'object',
    methods: ['get', 'commit'],
    expected: 'a VersionStore (get and commit)',
    required: true,
  },
  name: { kind: 'nonEmptyString' },
  creationTimeResolution: { kind: 'integer', min: 1, max: 3_600, default: 1 },
  concurrency: { kind: 'integer', min: 1, max: 256, default: 16 },
});

/**
 * The store already held a version as new or newer when this record's was committed: another
 * writer wrote the item between this sink's read of the version and its commit. Reported failed,
 * so the record is delivered again and checked again; a guarded sink needs one writer per item at
 * a time (docs/backfill.md).
 */
export class VersionConflictError extends RecordError {
  override name = 'VersionConflictError';
  constructor(record: ClassifiedRecord) {
    super(`record ${recordLabel(record)}: a concurrent writer stored a newer version of its item`, record);
  }
}

function isDelete(record: ClassifiedRecord): boolean {
  return record.kind === 'user-delete' || record.kind === 'ttl-delete';
}

/**
 * Wraps a sink that stores item state (a search index, a copy table) so that it never writes an
 * older state of an item over a newer one, whichever order backfill copies and stream records
 * arrive in, and however often. Per record: its version (recordVersion) is compared with what the
 * store holds for its item (named by its keys' value, itemKeyOf: `1.5` and `1.50` are one item) and with the batch's earlier records of that item; an older or equal
 * one is skipped (counted written: its state, or a newer one, is already there). The rest go to
 * the sink in order, and each item's newest written version is then committed — after the write,
 * so a write that fails is delivered again and not skipped. Deletes are committed too (tombstones).
 *
 * The wrapped sink must have stored a record durably when its `write` resolves (a sink that
 * buffers until `flush` would have its versions committed before its data). One writer per item
 * at a time: the procedure in docs/backfill.md runs the backfill, then the stream consumer.
 */
export function versionGuard<R extends ClassifiedRecord<object>>(
  sink: Sink<R>,
  options: VersionGuardOptions,
): Sink<R> {
  const o = readOptions(options);
  const store = o.store;
  const guarded: Sink<R> = {
    name: o.name ?? sink.name,
    async write(records: readonly R[], context: SinkContext): Promise<SinkResult> {
      const failed: SinkFailure[] = [];
      const placed: { record: R; key: string; version: RecordVersion }[] = [];
      for (const record of records) {
        const r = record as unknown as ClassifiedRecord;
        try {
          placed.push({ record, key: itemKeyOf(r), version: recordVersion(r, o.creationTimeResolution) });
        } catch (error) {
          // A record the guard cannot place (no creation time, a key DynamoDB could not hold) fails alone.
          if (!(error instanceof UnversionedRecordError || error instanceof MalformedRecordError))
            throw error;
          failed.push({ sequenceNumber: r.sequenceNumber, error });
        }
      }
      const newest = new Map(await store.get([...new Set(placed.map((p) => p.key))]));
      const passed: typeof placed = [];
      for (const p of placed) {
        const held = newest.get(p.key);
        if (held !== undefined && !(held < p.version)) continue;
        newest.set(p.key, p.version);
        passed.push(p);
      }
      if (passed.length === 0) return failed.length === 0 ? {} : { failed };
      const result = await sink.write(
        passed.map((p) => p.record),
        context,
      );
      const notWritten = new Set((result?.failed ?? []).map((f) => f.sequenceNumber));
      failed.push(...(result?.failed ?? []));
      // Per item, the last written record is its newest (passed versions rise per item).
      const toCommit = new Map<string, (typeof placed)[number]>();
      for (const p of passed)
        if (!notWritten.has((p.record as ClassifiedRecord).sequenceNumber)) toCommit.set(p.key, p);
      const limit = pLimit(o.concurrency);
      const conflicts = await Promise.all(
        [...toCommit.values()].map((p) =>
          limit(async () => {
            const r = p.record as unknown as ClassifiedRecord;
            return (await store.commit(p.key, p.version, isDelete(r))) ? undefined : r;
          }),
        ),
      );
      for (const r of conflicts)
        if (r !== undefined)
          failed.push({ sequenceNumber: r.sequenceNumber, error: new VersionConflictError(r) });
      return failed.length === 0 ? {} : { failed };
    },
  };
  if (sink.checkedImages !== undefined) Object.assign(guarded, { checkedImages: sink.checkedImages });
  if (sink.flush !== undefined) guarded.flush = (context) => sink.flush?.(context);
  if (sink.close !== undefined) guarded.close = () => sink.close?.();
  return guarded;
}
