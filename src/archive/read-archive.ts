import { defineOptions } from '../core/options.js';
import { parseStreamRecord } from '../records/index.js';
import type { ClassifiedRecord } from '../records/types.js';
import { ArchiveFormatError, UnpartitionedObjectsError } from './errors.js';
import { type ArchiveRow, archiveRowId, isStandInShard, rowToLambdaRecord } from './format.js';
import { recordTenantSegment, type TenantPartitioner, tenantSegment } from './partition.js';
import { requireRestored } from './restore-state.js';
import {
  type ArchiveRange,
  type ArchiveRangeOptions,
  fetchArchiveObject,
  type ListedArchiveObject,
  listArchiveHours,
  RANGE_OPTIONS,
  resolveRange,
} from './store.js';

/** An object readArchive skipped (with `onCorruptObject`) because it is not a readable archive object. */
export interface CorruptArchiveObject {
  key: string;
  /** Bytes, as listed. */
  size: number;
  /** Why: bad gzip (a zero-byte or truncated object), a line that is not a row, a checksum mismatch. */
  error: ArchiveFormatError;
}

/** Options of readArchive and readArchiveRows: the range to read and checksum verification. */
export interface ReadArchiveOptions extends ArchiveRangeOptions {
  /** Compare each object's body to the SHA-256 in its metadata. Default true. */
  verifyChecksum?: boolean;
  /**
   * Read only this tenant's rows (an archive written with `partitionBy`): other tenants' objects
   * are not even fetched. A `/`, an empty id or control characters: InvalidTenantError.
   */
  tenant?: string;
  /**
   * With `tenant`: picks the tenant's rows out of unpartitioned objects in range (written without
   * `partitionBy`, or by a batch over `maxPartitionsPerBatch`). Without it such an object makes
   * the read throw UnpartitionedObjectsError, rather than return part of the tenant's rows.
   */
  partitionBy?: TenantPartitioner;
  /**
   * Skip objects that are not readable archive objects and report each here, reading on. Default:
   * none, and the first such object ends the read with its ArchiveFormatError (nothing after it in
   * the range is read). Only corruption is skipped: a failed request (throttling, access, a
   * missing bucket) still ends the read.
   */
  onCorruptObject?: (corrupt: CorruptArchiveObject) => void;
}

const readOptions = /* @__PURE__ */ defineOptions<ReadArchiveOptions>()('readArchive', {
  ...RANGE_OPTIONS,
  verifyChecksum: { kind: 'boolean', default: true },
  tenant: { kind: 'string' },
  partitionBy: { kind: 'function' },
  onCorruptObject: { kind: 'function' },
});

/** One tenant to read: its id, its key segment, and the partitioner that picks its rows out of mixed objects. */
export interface TenantSelection {
  id: string;
  segment: string;
  partitionBy: TenantPartitioner | undefined;
}

/** The tenant a `tenant` option names (InvalidTenantError for an id no segment can hold). */
export function tenantSelection(id: string, partitionBy: TenantPartitioner | undefined): TenantSelection {
  return { id, segment: tenantSegment(id), partitionBy };
}

/**
 * Whether a row of a mixed (unpartitioned) object is the tenant's: by its partitioner. A row whose
 * tenant cannot be told is not known to be this tenant's.
 */
export function isTenantRow(tenant: TenantSelection, row: ArchiveRow): boolean {
  try {
    return recordTenantSegment(tenant.partitionBy as TenantPartitioner, rowToRecord(row)) === tenant.segment;
  } catch {
    return false;
  }
}

interface ResolvedRead extends ArchiveRange {
  verify: boolean;
  tenant: TenantSelection | undefined;
  onCorrupt: ((corrupt: CorruptArchiveObject) => void) | undefined;
}

function resolve(options: ReadArchiveOptions): ResolvedRead {
  const o = readOptions(options);
  const range = resolveRange(o, readOptions);
  if (o.partitionBy !== undefined && o.tenant === undefined) {
    throw readOptions.fail(
      'partitionBy picks one tenant out of mixed objects: give tenant too',
      'partitionBy',
    );
  }
  return {
    ...range,
    verify: o.verifyChecksum,
    onCorrupt: o.onCorruptObject,
    tenant: o.tenant === undefined ? undefined : tenantSelection(o.tenant, o.partitionBy),
  };
}

/**
 * Shard by shard, in sequence order, every tenant's objects together: an item's rows may sit in
 * its tenant's objects and in unpartitioned ones (a batch over `maxPartitionsPerBatch`), and a
 * change log needs them in the order they happened, not tenant objects first.
 */
function byShardThenSequence(a: ListedArchiveObject, b: ListedArchiveObject): number {
  if (a.shard !== b.shard) return a.shard < b.shard ? -1 : 1;
  if (a.firstSequence !== b.firstSequence) return a.firstSequence < b.firstSequence ? -1 : 1;
  // The longer object first: a shorter overlapping one then adds nothing new.
  if (a.lastSequence !== b.lastSequence) return a.lastSequence < b.lastSequence ? 1 : -1;
  // Equal ranges under a stand-in shard segment are different shards' objects (told apart by
  // the key's tag), and one batch's tenant objects share a range: the key fixes their order, so a
  // read returns rows in the same order every time.
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * The objects to read cut into runs: consecutive objects of one shard segment whose sequence
 * ranges overlap. Rows of different runs never interleave, so a run of one object is streamed as
 * stored, and only an overlapping run (one batch's tenant objects, a redelivery cut elsewhere) is
 * held and merged: memory stays bounded by a batch, not the hour.
 */
function overlappingRuns<T extends { object: ListedArchiveObject }>(ordered: readonly T[]): T[][] {
  const runs: T[][] = [];
  let run: T[] = [];
  let end = -1n;
  let shard: string | undefined;
  for (const entry of ordered) {
    const { object } = entry;
    if (run.length > 0 && (object.shard !== shard || object.firstSequence > end)) {
      runs.push(run);
      run = [];
    }
    if (run.length === 0) {
      shard = object.shard;
      end = object.lastSequence;
    } else if (object.lastSequence > end) end = object.lastSequence;
    run.push(entry);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/** Stream order of two rows of one shard segment (as compaction orders them). */
function byRowSequence(a: ArchiveRow, b: ArchiveRow): number {
  const x = BigInt(a.sequenceNumber);
  const y = BigInt(b.sequenceNumber);
  if (x !== y) return x < y ? -1 : 1;
  return a.eventID < b.eventID ? -1 : a.eventID > b.eventID ? 1 : 0;
}

/**
 * The objects of one hour to read, in reading order, and for each whether every row in it is
 * wanted (`all`) or only the tenant's (`pick`). Another tenant's object is not read at all; a
 * mixed object without a partitioner is an UnpartitionedObjectsError.
 */
export function toRead(
  tenant: TenantSelection | undefined,
  objects: ListedArchiveObject[],
): { object: ListedArchiveObject; pick: boolean }[] {
  if (tenant === undefined)
    return objects.sort(byShardThenSequence).map((object) => ({ object, pick: false }));
  const mixed = objects.filter((o) => o.tenant === undefined);
  if (mixed.length > 0 && tenant.partitionBy === undefined) {
    throw new UnpartitionedObjectsError(
      tenant.id,
      mixed.map((o) => o.key),
    );
  }
  return objects
    .filter((o) => o.tenant === undefined || o.tenant === tenant.segment)
    .sort(byShardThenSequence)
    .map((object) => ({ object, pick: object.tenant === undefined }));
}

/**
 * The archived rows of one table between `from` and `to` (record time, for a TTL delete the
 * deletion time), listing only the dt/hour partitions in range. Rows come hour by hour, then
 * shard segment by shard segment in sequence order — every tenant's rows together, so each item's
 * changes come in the order they happened — each (shard, sequenceNumber, eventID) once even when
 * a retried batch was cut differently and objects overlap. An hour holding GLACIER / DEEP_ARCHIVE
 * objects without a readable restored copy throws ArchiveRestoreRequiredError (naming them) before
 * any of its rows is yielded.
 */
export async function* readArchiveRows(options: ReadArchiveOptions): AsyncGenerator<ArchiveRow> {
  const r = resolve(options);
  // A row's partition is a function of its own time, so copies of a row (overlapping objects of
  // a redelivery cut elsewhere) always share one hour partition: remembering one hour at a time
  // keeps memory bounded by the largest hour, not the whole range.
  const seen = new Set<string>();
  for await (const hour of listArchiveHours(r)) {
    seen.clear();
    const reading = toRead(r.tenant, hour.objects);
    // Before the hour's first row: all of its archived objects to read, named at once.
    await requireRestored(
      r,
      reading.map((x) => x.object),
    );
    for (const run of overlappingRuns(reading)) {
      const wanted: ArchiveRow[] = [];
      for (const { object, pick } of run) {
        let rows: ArchiveRow[];
        try {
          ({ rows } = await fetchArchiveObject(r.client, r.bucket, object.key, {
            verify: r.verify,
            signal: r.signal,
          }));
        } catch (error) {
          if (r.onCorrupt === undefined || !(error instanceof ArchiveFormatError)) throw error;
          r.onCorrupt({ key: object.key, size: object.size, error });
          continue;
        }
        for (const row of rows) {
          const ms = row.approximateCreationDateTime * 1000;
          if (ms < r.fromMs || ms >= r.toMs) continue;
          // Every copy of a row carries its record's eventID. Lambda gives no shard id, so all shards
          // of a stream share the `stream-<label>` segment, and AWS documents sequence numbers as
          // unique only within a shard: with the eventID, two shards' records never count as one.
          const id = archiveRowId(row);
          if (seen.has(id)) continue;
          if (pick && !isTenantRow(r.tenant as TenantSelection, row)) continue;
          seen.add(id);
          if (run.length === 1) yield row;
          else wanted.push(row);
        }
      }
      if (run.length > 1) yield* wanted.sort(byRowSequence);
    }
  }
}

/** A row back as the classified record it was archived from (`parseStreamRecord` on the rebuilt raw record). */
export function rowToRecord(row: ArchiveRow): ClassifiedRecord {
  // `stream-<label>` stands in for a shard id the source did not know; do not invent one.
  const shardId = isStandInShard(row.shard) ? undefined : row.shard;
  const k = row.kinesis;
  const origin =
    k === undefined ? undefined : ({ source: 'kinesis', sequenceNumber: row.sequenceNumber, ...k } as const);
  return parseStreamRecord(rowToLambdaRecord(row), {
    ...(shardId === undefined ? {} : { shardId }),
    ...(origin === undefined ? {} : { origin }),
  });
}

/** `readArchiveRows`, as classified records. */
export async function* readArchive(options: ReadArchiveOptions): AsyncGenerator<ClassifiedRecord> {
  for await (const row of readArchiveRows(options)) yield rowToRecord(row);
}
