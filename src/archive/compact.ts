import pLimit from 'p-limit';
import { defineOptions } from '../core/options.js';
import { type ServerSideEncryption, SSE_OPTION, sseParams } from './bucket-options.js';
import { type CompactionSource, planCompaction } from './compaction-plan.js';
import { CompactionIncompleteError, hourLabel, isS3Answer, OpenPartitionError } from './errors.js';
import {
  ARCHIVE_STORAGE_CLASSES,
  type ArchiveObjectFormat,
  type ArchiveStorageClass,
  partitionTime,
} from './format.js';
import { closesAt, DEFAULT_CLOSED_AFTER_SECONDS, wholeHours } from './hours.js';
import { type CompactionManifest, manifestKey, manifestPrefix, parseManifest } from './manifest.js';
import { DEFAULT_MAX_OBJECT_BYTES } from './objects.js';
import { DEFAULT_KEY_ATTRIBUTES, type KeyAttributes } from './parquet-columns.js';
import type { TenantPartitioner } from './partition.js';
import { requireRestored } from './restore-state.js';
import { NDJSON_ENCODER, type ObjectEncoder } from './rewritten-object.js';
import {
  type ArchiveRangeOptions,
  deleteObject,
  type FetchedArchiveObject,
  fetchArchiveObject,
  getText,
  HOUR_MS,
  type ListedArchiveObject,
  type ListedHour,
  listArchiveHours,
  listHourKeys,
  listKeys,
  putArchiveObject,
  putJson,
  RANGE_OPTIONS,
  resolveRange,
  type Store,
  toMillis,
  type WriteSettings,
} from './store.js';
import {
  checkTypedColumns,
  type JsonSchemaCarrier,
  type TypedColumns,
  typedColumnsFromSchema,
} from './typed-columns.js';

/** Every hour overlapping [from, to) is compacted whole. */
export interface CompactArchiveOptions extends ArchiveRangeOptions {
  /** Bound on one compacted object's NDJSON bytes before gzip. Default 16 MiB, as the sinks. */
  maxObjectBytes?: number;
  /** Storage class of the objects written. Default STANDARD. */
  storageClass?: ArchiveStorageClass;
  sse?: ServerSideEncryption;
  /** Moves the rows of unpartitioned objects into their tenants' objects. */
  partitionBy?: TenantPartitioner;
  /**
   * The objects' encoding: `ndjson` (NDJSON+gzip, as the sinks write) or `parquet` (Apache
   * Parquet, docs/archive.md#parquet). An hour compacted in the other format is rewritten in this
   * one. Default `ndjson`.
   */
  format?: ArchiveObjectFormat;
  /** Parquet only: typed `item_<name>` columns for these top-level item attributes. */
  typedColumns?: TypedColumns;
  /**
   * Parquet only: the item's schema, for typed columns of its top-level string, boolean and
   * number properties — a Standard Schema that also implements Standard JSON Schema (zod 4);
   * `typedColumns` adds to and overrides what it gives.
   */
  itemSchema?: JsonSchemaCarrier;
  /** Parquet only: which key attributes fill the `pk` and `sk` columns. Default `pk` and `sk`. */
  keyAttributes?: KeyAttributes;
  /**
   * An hour is closed `closedAfterSeconds` after its end; compacting one still open throws
   * OpenPartitionError. Default 90,000 (25 hours: the 24-hour record age limit plus one).
   */
  closedAfterSeconds?: number;
  /**
   * GLACIER / DEEP_ARCHIVE objects in range were restored: read them without asking S3 first.
   * Default false: each is checked with a HeadObject (its restore state) before anything is read,
   * and one without a readable copy throws ArchiveRestoreRequiredError.
   */
  restored?: boolean;
  /** Plan and report, write and delete nothing. */
  dryRun?: boolean;
  /** Requests in flight at once. Default 8. */
  concurrency?: number;
  /** Compare each object read to the SHA-256 in its metadata. Default true. */
  verifyChecksum?: boolean;
  /** The time an hour's closing is judged against. Default now. */
  now?: Date | number;
}

const readOptions = defineOptions<CompactArchiveOptions>()('compactArchive', {
  ...RANGE_OPTIONS,
  maxObjectBytes: { kind: 'integer', min: 1, default: DEFAULT_MAX_OBJECT_BYTES },
  storageClass: { kind: 'enum', values: ARCHIVE_STORAGE_CLASSES, default: 'STANDARD' },
  sse: SSE_OPTION,
  partitionBy: { kind: 'function' },
  format: { kind: 'enum', values: ['ndjson', 'parquet'] as const, default: 'ndjson' },
  typedColumns: { kind: 'object', expected: "a map of attribute names to 'string', 'boolean' or 'number'" },
  itemSchema: { kind: 'object', expected: 'a Standard Schema' },
  keyAttributes: {
    kind: 'custom',
    expected: '{ partition: string, sort?: string }',
    check: (v) => {
      const k = v as Partial<KeyAttributes> | null;
      return (
        k !== null &&
        typeof k === 'object' &&
        typeof k.partition === 'string' &&
        k.partition !== '' &&
        (k.sort === undefined || (typeof k.sort === 'string' && k.sort !== ''))
      );
    },
  },
  closedAfterSeconds: { kind: 'integer', min: 0, default: DEFAULT_CLOSED_AFTER_SECONDS },
  restored: { kind: 'boolean', default: false },
  dryRun: { kind: 'boolean', default: false },
  concurrency: { kind: 'integer', min: 1, max: 64, default: 8 },
  verifyChecksum: { kind: 'boolean', default: true },
  now: {
    kind: 'custom',
    expected: 'a Date or epoch milliseconds',
    check: (v) => Number.isFinite(toMillis(v)),
  },
  signal: { kind: 'object', expected: 'an AbortSignal', methods: ['throwIfAborted'] },
});

/** What compaction did to one hour partition (or, in a dry run, would do). */
export interface HourCompaction {
  /** `table=<t>/dt=<d>/hour=<h>` */
  partition: string;
  /**
   * `compacted`; `unchanged` when the hour is one object, or exactly the objects its latest
   * manifest wrote; `planned` in a dry run.
   */
  status: 'compacted' | 'unchanged' | 'planned';
  objectsRead: number;
  rowsRead: number;
  /** Row copies dropped: the raw objects now hold each (shard, sequenceNumber, eventID) once. */
  duplicates: number;
  rowsWritten: number;
  /** Rows of unpartitioned objects `partitionBy` could not place (kept unpartitioned). */
  unassigned: number;
  /** Objects put (a planned object already stored, byte for byte, is not put again). */
  written: string[];
  /** Objects deleted: read by this run and replaced by what it wrote. */
  deleted: string[];
  /** Replaced objects not deleted because they changed or vanished after being read. */
  notDeleted: string[];
  /** Objects that appeared while the run worked (late redeliveries): left for the next run. */
  late: string[];
  manifest: string | undefined;
}

/** What compactArchive did, hour by hour (or would do, on a dry run). */
export interface CompactionReport {
  dryRun: boolean;
  hours: HourCompaction[];
}

interface Run extends Store {
  prefix: string;
  table: string;
  layout: { maxObjectBytes: number; partitionBy: TenantPartitioner | undefined; encoder: ObjectEncoder };
  write: WriteSettings;
  restored: boolean;
  dryRun: boolean;
  verify: boolean;
  limit: ReturnType<typeof pLimit>;
}

/**
 * Rewrites each closed hour partition overlapping [from, to) into as few objects as
 * `maxObjectBytes` allows — every (shard, sequenceNumber, eventID) once, in stream order, each
 * tenant's rows apart — then deletes the objects it replaced.
 *
 * Safe to repeat, to crash, and to run while late redeliveries write into the hour: it writes the
 * new objects and a manifest first, then lists the hour again and deletes only objects it read,
 * in the version it read. An object that appeared meanwhile stays (the next run compacts it); a
 * crash leaves the old objects beside the new ones, which readers de-duplicate, and a rerun
 * finishes. An hour already compacted costs one listing and one manifest read.
 */
export async function compactArchive(options: CompactArchiveOptions): Promise<CompactionReport> {
  const o = readOptions(options);
  const requested = resolveRange(o, readOptions);
  const range = wholeHours(requested.fromMs, requested.toMs);
  const table = requested.table;
  const nowMs = o.now === undefined ? Date.now() : toMillis(o.now);
  const lastHour = range.toMs - HOUR_MS;
  const closing = closesAt(lastHour, o.closedAfterSeconds);
  if (closing > nowMs) {
    const { dt, hour } = partitionTime(lastHour / 1000);
    throw new OpenPartitionError(hourLabel(table, dt, hour), new Date(closing));
  }
  const run: Run = {
    client: requested.client,
    bucket: requested.bucket,
    signal: requested.signal,
    prefix: requested.prefix,
    table,
    layout: { maxObjectBytes: o.maxObjectBytes, partitionBy: o.partitionBy, encoder: await encoderOf(o) },
    write: { storageClass: o.storageClass, sse: sseParams(o.sse, readOptions.where) },
    restored: o.restored,
    dryRun: o.dryRun,
    verify: o.verifyChecksum,
    limit: pLimit(o.concurrency),
  };
  const report: CompactionReport = { dryRun: o.dryRun, hours: [] };
  for await (const listed of listArchiveHours({ ...run, ...range })) {
    report.hours.push(await compactHour(run, listed));
  }
  return report;
}

/**
 * The encoder the options ask for. Parquet's writer is imported only here, so compacting to
 * NDJSON (and every sink) never loads it.
 */
async function encoderOf(o: CompactArchiveOptions): Promise<ObjectEncoder> {
  const parquetOnly = (['typedColumns', 'itemSchema', 'keyAttributes'] as const).find(
    (k) => o[k] !== undefined,
  );
  if (o.format !== 'parquet') {
    if (parquetOnly !== undefined) throw readOptions.fail("applies to format 'parquet' only", parquetOnly);
    return NDJSON_ENCODER;
  }
  const typedColumns = checkTypedColumns(readOptions.where, {
    ...(o.itemSchema === undefined ? {} : typedColumnsFromSchema(o.itemSchema)),
    ...o.typedColumns,
  });
  const { parquetEncoder } = await import('./parquet-object.js');
  return parquetEncoder({ keyAttributes: o.keyAttributes ?? DEFAULT_KEY_ATTRIBUTES, typedColumns });
}

async function latestManifest(run: Run, listed: ListedHour): Promise<CompactionManifest | undefined> {
  const manifests = await listKeys(run, manifestPrefix(run.prefix, run.table, listed.dt, listed.hour));
  const last = manifests.filter((m) => m.key.endsWith('.json')).at(-1);
  return last === undefined ? undefined : parseManifest(await getText(run, last.key), last.key);
}

function isMissing(error: unknown): boolean {
  return isS3Answer(error, 'NoSuchKey', 404);
}

async function compactHour(run: Run, listed: ListedHour): Promise<HourCompaction> {
  const partition = hourLabel(run.table, listed.dt, listed.hour);
  const result: HourCompaction = {
    partition,
    status: 'unchanged',
    objectsRead: 0,
    rowsRead: 0,
    duplicates: 0,
    rowsWritten: 0,
    unassigned: 0,
    written: [],
    deleted: [],
    notDeleted: [],
    late: [],
    manifest: undefined,
  };
  const objects = listed.objects;
  const format = run.layout.encoder.format;
  // One object holds each row once already; a compacted hour is exactly its last manifest's
  // outputs. Either is left as it is when it is in the format asked for, else rewritten in it.
  if (objects.length === 0) return result;
  if (objects.length === 1 && objects[0]?.format === format) return result;
  const latest = await latestManifest(run, listed);
  if (latest !== undefined && (latest.format ?? 'ndjson') === format) {
    const outputs = new Set(latest.outputs.map((x) => x.key));
    if (objects.every((object) => outputs.has(object.key))) return result;
  }

  // Before reading anything: every archived object of the hour needs a readable restored copy.
  // With `restored` the caller vouches for that, and a refused read still names the key.
  if (!run.restored) await requireRestored(run, objects, run.limit);

  // Read every object of the hour. One deleted meanwhile (a concurrent run compacted it) is not
  // read, so it is neither counted on nor deleted here.
  const read = new Map<string, { object: ListedArchiveObject; fetched: FetchedArchiveObject }>();
  await Promise.all(
    objects.map((object) =>
      run.limit(async () => {
        try {
          const fetched = await fetchArchiveObject(run.client, run.bucket, object.key, {
            verify: run.verify,
            signal: run.signal,
          });
          read.set(object.key, { object, fetched });
        } catch (error) {
          if (isMissing(error)) return;
          throw error;
        }
      }),
    ),
  );
  const sources: CompactionSource[] = [...read.values()].map(({ object, fetched }) => ({
    key: object.key,
    tenant: object.tenant,
    shard: object.shard,
    rows: fetched.rows,
  }));
  const plan = planCompaction(sources, {
    prefix: run.prefix,
    table: run.table,
    dt: listed.dt,
    hour: listed.hour,
    ...run.layout,
  });
  const listedKeys = new Set(objects.map((object) => object.key));
  const outputKeys = new Set(plan.outputs.map((x) => x.key));
  const replaced = [...read.keys()].filter((key) => !outputKeys.has(key));
  Object.assign(result, {
    objectsRead: read.size,
    rowsRead: plan.rowsRead,
    duplicates: plan.duplicates,
    rowsWritten: plan.rowsWritten,
    unassigned: plan.unassigned,
  });
  const toWrite = plan.outputs.filter((x) => !listedKeys.has(x.key));
  const manifest: CompactionManifest = {
    type: 'tidewater.compaction',
    version: 1,
    format,
    prefix: run.prefix,
    table: run.table,
    dt: listed.dt,
    hour: listed.hour,
    createdAt: new Date().toISOString(),
    inputs: [...read.values()].map(({ object, fetched }) => ({
      key: object.key,
      ...(fetched.etag === undefined ? {} : { etag: fetched.etag }),
      ...(fetched.versionId === undefined ? {} : { versionId: fetched.versionId }),
      rows: fetched.rows.length,
      bytes: fetched.bytes,
    })),
    outputs: plan.outputs.map((x) => ({
      key: x.key,
      rows: x.rows,
      sha256: x.sha256,
      first: x.first,
      last: x.last,
      bytes: x.body.length,
    })),
    replaced,
    rows: {
      read: plan.rowsRead,
      duplicates: plan.duplicates,
      written: plan.rowsWritten,
      unassigned: plan.unassigned,
    },
    rowSetSha256: plan.rowSetSha256,
  };
  const key = manifestKey(manifest);
  if (run.dryRun) {
    return {
      ...result,
      status: 'planned',
      written: toWrite.map((x) => x.key),
      deleted: replaced,
      manifest: key,
    };
  }

  // 1. The new objects, then the manifest. Until both are stored nothing is deleted.
  try {
    await Promise.all(
      toWrite.map((output) =>
        run.limit(() => putArchiveObject(run, run.write, output, { 'compaction-manifest': key })),
      ),
    );
    await putJson(run, run.write, key, manifest);
  } catch (error) {
    throw new CompactionIncompleteError(partition, 'write', { cause: error });
  }
  result.status = 'compacted';
  result.written = toWrite.map((x) => x.key);
  result.manifest = key;

  // 2. List again: delete only what was read, unchanged since; anything new is the next run's.
  // Both roots: an hour moving between formats replaces objects of the other root.
  const now = new Map(
    (await listHourKeys(run, run.prefix, { ...listed, table: run.table })).map((x) => [x.key, x.etag]),
  );
  for (const listedKey of now.keys()) {
    if (!listedKeys.has(listedKey) && !outputKeys.has(listedKey)) result.late.push(listedKey);
  }
  const failed: string[] = [];
  let cause: unknown;
  await Promise.all(
    replaced.map((replacedKey) =>
      run.limit(async () => {
        const { fetched } = read.get(replacedKey) as { fetched: FetchedArchiveObject };
        const current = now.get(replacedKey);
        if (current === undefined || (fetched.etag !== undefined && current !== fetched.etag)) {
          result.notDeleted.push(replacedKey);
          return;
        }
        try {
          await deleteObject(run, replacedKey, fetched.versionId);
          result.deleted.push(replacedKey);
        } catch (error) {
          failed.push(replacedKey);
          cause ??= error;
        }
      }),
    ),
  );
  result.deleted.sort();
  result.notDeleted.sort();
  if (failed.length > 0) {
    throw new CompactionIncompleteError(partition, 'delete', {
      manifestKey: key,
      keys: failed.sort(),
      cause,
    });
  }
  return result;
}
