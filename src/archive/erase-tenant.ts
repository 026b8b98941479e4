import pLimit from 'p-limit';
import { defineOptions } from '../core/options.js';
import {
  keyPrefix,
  PREFIX_OPTION,
  type ServerSideEncryption,
  SSE_OPTION,
  sseParams,
} from './bucket-options.js';
import { type DeadLetterScan, scanDeadLetters } from './dead-letters.js';
import { eraseAction, splitRows } from './erase-plan.js';
import { EraseIncompleteError, UnpartitionedObjectsError } from './errors.js';
import type { ArchivePartition, ArchiveRow } from './format.js';
import { ARCHIVE_STORAGE_CLASSES, type ArchiveStorageClass } from './format.js';
import { recordTenantSegment, type TenantPartitioner, tenantSegment } from './partition.js';
import { rowToRecord } from './read-archive.js';
import { requireRestored } from './restore-state.js';
import { NDJSON_ENCODER, type RewrittenObject, rewrittenObject } from './rewritten-object.js';
import {
  type ArchiveRangeOptions,
  deleteEveryVersion,
  fetchArchiveObject,
  keepsVersions,
  type ListedArchiveObject,
  listArchiveHours,
  putArchiveObject,
  RANGE_OPTIONS,
  recordCount,
  resolveRange,
  type Store,
  type WriteSettings,
} from './store.js';

/** [from, to) is the range of the records' ApproximateCreationDateTime to erase. */
export interface EraseTenantOptions extends ArchiveRangeOptions {
  /** The tenant id, as `partitionBy` returns it. A `/`, an empty id or control characters: InvalidTenantError. */
  tenant: string;
  /**
   * Tells the tenant of a row in an unpartitioned object (and of a dead-letter entry). Without
   * it, unpartitioned objects in range make the erase throw UnpartitionedObjectsError.
   */
  partitionBy?: TenantPartitioner;
  /**
   * Also erase the tenant's entries from an S3DeadLetterSink store (`prefix` as given to the
   * sink, `bucket` default the archive's). Needs `partitionBy`.
   */
  deadLetter?: { prefix: string; bucket?: string };
  /** Storage class of rewritten objects. Default STANDARD. */
  storageClass?: ArchiveStorageClass;
  sse?: ServerSideEncryption;
  /**
   * GLACIER / DEEP_ARCHIVE objects that must be read were restored: read them without asking S3
   * first. Default false: their restore state is checked (HeadObject) before anything changes.
   */
  restored?: boolean;
  /** List what would go, change nothing. */
  dryRun?: boolean;
  concurrency?: number;
  verifyChecksum?: boolean;
}

const readDeadLetter = defineOptions<{ prefix: string; bucket?: string }>()('eraseTenant deadLetter', {
  prefix: { ...PREFIX_OPTION, required: true },
  bucket: { kind: 'nonEmptyString' },
});

const readOptions = defineOptions<EraseTenantOptions>()('eraseTenant', {
  ...RANGE_OPTIONS,
  tenant: { kind: 'string', required: true },
  partitionBy: { kind: 'function' },
  deadLetter: { kind: 'object' },
  storageClass: { kind: 'enum', values: ARCHIVE_STORAGE_CLASSES, default: 'STANDARD' },
  sse: SSE_OPTION,
  restored: { kind: 'boolean', default: false },
  dryRun: { kind: 'boolean', default: false },
  concurrency: { kind: 'integer', min: 1, max: 64, default: 8 },
  verifyChecksum: { kind: 'boolean', default: true },
});

/** What eraseTenant deleted (or would delete, on a dry run). */
export interface EraseReport {
  tenant: string;
  /** The tenant's key segment (`tenant=<segment>`). */
  segment: string;
  from: string;
  to: string;
  dryRun: boolean;
  /** Objects deleted whole (the tenant's own, or unpartitioned ones holding only its rows). */
  deleted: { key: string; rows: number | undefined }[];
  /** Unpartitioned objects (or the tenant's own in an hour the range cuts) rewritten without its rows. */
  rewritten: { key: string; replacement: string; rowsErased: number; rowsKept: number }[];
  rowsErased: number;
  /** Rows kept because the partitioner could not place them (it threw). */
  unattributedRows: number;
  /** Object versions deleted (every version of each key on a versioned bucket). 0 in a dry run. */
  versionsDeleted: number;
  /** With `deadLetter`: entries deleted, and entries kept because they could not be placed. */
  deadLetters: { deleted: string[]; unattributed: string[] } | undefined;
}

interface Rewrite {
  object: ListedArchiveObject;
  replacement: RewrittenObject;
  erased: number;
  kept: number;
}

/**
 * Erases every archived row of one tenant whose record time is in [from, to): the tenant's own
 * objects are deleted unread; unpartitioned objects (and the tenant's objects in an hour the
 * range only cuts) are read and rewritten without its rows; other tenants' objects are neither
 * read nor written. On a bucket that keeps versions every version of each erased key is deleted,
 * so nothing of the tenant survives as a noncurrent version. With `deadLetter`, the tenant's
 * entries in an S3 dead-letter store go too. `dryRun` lists all of it and changes nothing.
 *
 * Everything that could stop the erase — an invalid tenant id, unpartitioned objects without a
 * partitioner, objects needing a restore — is found before the first change. A rewrite puts the
 * new object before deleting the old one, so a failure part-way (EraseIncompleteError) never
 * loses another tenant's rows, and running the same erase again finishes it.
 */
export async function eraseTenant(options: EraseTenantOptions): Promise<EraseReport> {
  const o = readOptions(options);
  // Resolved before any work, so a bad `sse` fails as InvalidOptionsError (dry run included),
  // not as EraseIncompleteError once rewrites began.
  const write: WriteSettings = { storageClass: o.storageClass, sse: sseParams(o.sse, readOptions.where) };
  const segment = tenantSegment(o.tenant);
  const range = resolveRange(o, readOptions);
  const { prefix, table, fromMs, toMs } = range;
  const deadLetter =
    o.deadLetter === undefined ? undefined : readDeadLetter(o.deadLetter, readOptions.where, 'deadLetter.');
  if (deadLetter !== undefined && o.partitionBy === undefined) {
    throw readOptions.fail(
      'deadLetter needs partitionBy: an entry holds its record, and only partitionBy names its tenant',
      'deadLetter',
    );
  }
  const store: Store = { client: range.client, bucket: range.bucket, signal: range.signal };
  const limit = pLimit(o.concurrency);
  const partitionBy = o.partitionBy;
  const isTenantRecord =
    partitionBy === undefined
      ? undefined
      : (record: Parameters<TenantPartitioner>[0]) => recordTenantSegment(partitionBy, record) === segment;
  const report: EraseReport = {
    tenant: o.tenant,
    segment,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    dryRun: o.dryRun,
    deleted: [],
    rewritten: [],
    rowsErased: 0,
    unattributedRows: 0,
    versionsDeleted: 0,
    deadLetters: undefined,
  };

  // 1. Classify every object in range; refuse before reading if something cannot be done.
  const whole: ListedArchiveObject[] = [];
  const toRead: ListedArchiveObject[] = [];
  const unpartitioned: string[] = [];
  const target = { segment, fromMs, toMs, canPartition: partitionBy !== undefined };
  for await (const hour of listArchiveHours(range)) {
    for (const object of hour.objects) {
      const action = eraseAction(object, hour.startMs, target);
      if (action === 'delete') whole.push(object);
      else if (action === 'read') toRead.push(object);
      else if (action === 'unpartitioned') unpartitioned.push(object.key);
    }
  }
  if (unpartitioned.length > 0) throw new UnpartitionedObjectsError(o.tenant, unpartitioned);
  if (!o.restored) await requireRestored(store, toRead, limit);

  // 2. Read what may hold some of the tenant's rows; decide per object.
  const isTenantRow =
    (object: ListedArchiveObject) =>
    (row: ArchiveRow): boolean | undefined => {
      if (object.tenant !== undefined) return object.tenant === segment;
      try {
        return (isTenantRecord as (r: Parameters<TenantPartitioner>[0]) => boolean)(rowToRecord(row));
      } catch {
        return undefined;
      }
    };
  const wholeRead: { object: ListedArchiveObject; rows: number }[] = [];
  const rewrites: Rewrite[] = [];
  await Promise.all(
    toRead.map((object) =>
      limit(async () => {
        const fetched = await fetchArchiveObject(store.client, store.bucket, object.key, {
          verify: o.verifyChecksum,
          signal: o.signal,
        });
        const split = splitRows(fetched.rows, isTenantRow(object), fromMs, toMs);
        report.unattributedRows += split.unattributed;
        if (split.erased.length === 0) return;
        if (split.kept.length === 0) {
          wholeRead.push({ object, rows: split.erased.length });
          return;
        }
        const partition: ArchivePartition = { table, dt: object.dt, hour: object.hour, shard: object.shard };
        if (object.tenant !== undefined) partition.tenant = object.tenant;
        // A Parquet object is rewritten as Parquet, with the settings it was written with.
        const encoder =
          fetched.parquet === undefined
            ? NDJSON_ENCODER
            : (await import('./parquet-object.js')).parquetEncoder(fetched.parquet);
        const replacement = rewrittenObject(
          prefix,
          partition,
          { rows: split.kept, lines: split.kept.map((row) => `${JSON.stringify(row)}\n`) },
          {
            first: (split.kept[0] as ArchiveRow).sequenceNumber,
            last: (split.kept.at(-1) as ArchiveRow).sequenceNumber,
          },
          encoder,
        );
        rewrites.push({ object, replacement, erased: split.erased.length, kept: split.kept.length });
      }),
    ),
  );
  const wholeCounts = await Promise.all(whole.map((object) => limit(() => recordCount(store, object.key))));
  report.deleted = [
    ...whole.map((object, i) => ({ key: object.key, rows: wholeCounts[i] })),
    ...wholeRead.map(({ object, rows }) => ({ key: object.key, rows })),
  ].sort((a, b) => (a.key < b.key ? -1 : 1));
  report.rewritten = rewrites
    .map((r) => ({
      key: r.object.key,
      replacement: r.replacement.key,
      rowsErased: r.erased,
      rowsKept: r.kept,
    }))
    .sort((a, b) => (a.key < b.key ? -1 : 1));
  report.rowsErased =
    report.deleted.reduce((sum, d) => sum + (d.rows ?? 0), 0) +
    report.rewritten.reduce((sum, r) => sum + r.rowsErased, 0);

  let scan: DeadLetterScan | undefined;
  const dlStore: Store | undefined =
    deadLetter === undefined ? undefined : { ...store, bucket: deadLetter.bucket ?? store.bucket };
  if (deadLetter !== undefined && dlStore !== undefined && isTenantRecord !== undefined) {
    scan = await scanDeadLetters(
      dlStore,
      keyPrefix(deadLetter.prefix),
      isTenantRecord,
      { fromMs, toMs },
      limit,
    );
    report.deadLetters = { deleted: scan.matches, unattributed: scan.unattributed };
  }
  if (o.dryRun) return report;

  // 3. Change: replacements first, then the deletes; each key with every version it has.
  const done: string[] = [];
  try {
    const versioned = await keepsVersions(store);
    const erase = async (s: Store, key: string, versionedBucket: boolean) => {
      // Awaited first: `+= await` would read the count before the wait and lose concurrent adds.
      const versions = await deleteEveryVersion(s, key, versionedBucket);
      report.versionsDeleted += versions;
      done.push(key);
    };
    await Promise.all(
      rewrites.map((r) =>
        limit(async () => {
          await putArchiveObject(store, write, r.replacement);
          if (r.replacement.key !== r.object.key) await erase(store, r.object.key, versioned);
        }),
      ),
    );
    await Promise.all(report.deleted.map((d) => limit(() => erase(store, d.key, versioned))));
    if (scan !== undefined && dlStore !== undefined) {
      const dlVersioned = dlStore.bucket === store.bucket ? versioned : await keepsVersions(dlStore);
      await Promise.all(scan.matches.map((key) => limit(() => erase(dlStore, key, dlVersioned))));
    }
  } catch (error) {
    throw new EraseIncompleteError(o.tenant, done, { cause: error });
  }
  return report;
}
