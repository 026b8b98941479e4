import {
  describeError,
  RecordError,
  type RecordIdentity,
  recordLabel,
  TidewaterError,
} from '../core/errors.js';

// Every error of the archive's S3 layout: placing, reading, restoring and maintaining it. The
// archive sink's own write failure (ArchiveWriteError) is the sink's, in sinks/errors.ts.

/** A tenant id that cannot name a tenant partition (empty, with a `/`, control characters, too long). */
export class InvalidTenantError extends TidewaterError {
  override name = 'InvalidTenantError';
  readonly tenant: string;
  constructor(tenant: string, detail: string) {
    const shown = tenant.length > 60 ? `${tenant.slice(0, 60)}…` : tenant;
    super(`tenant ${JSON.stringify(shown)}: ${detail}`);
    this.tenant = tenant;
  }
}

/** The archive bucket does not exist (S3 answered NoSuchBucket): a typo, or the wrong account or region. */
export class ArchiveBucketNotFoundError extends TidewaterError {
  override name = 'ArchiveBucketNotFoundError';
  readonly bucket: string;
  constructor(bucket: string, options?: { cause?: unknown }) {
    super(
      `bucket ${JSON.stringify(bucket)} does not exist (NoSuchBucket): check its name, account and region`,
      options,
    );
    this.bucket = bucket;
  }
}

/**
 * One tenant was asked for, but some objects in range hold every tenant's rows (written without
 * `partitionBy`, or by a batch over `maxPartitionsPerBatch`): only `partitionBy` can tell which
 * rows in them are the tenant's. eraseTenant throws it before changing anything; readArchive
 * before reading the hour that holds them, instead of returning part of the tenant's rows.
 */
export class UnpartitionedObjectsError extends TidewaterError {
  override name = 'UnpartitionedObjectsError';
  readonly keys: readonly string[];
  constructor(tenant: string, keys: readonly string[]) {
    super(
      `${keys.length} archive object(s) in range hold rows of every tenant (${someKeys(keys)}); ` +
        `pass partitionBy to pick tenant ${JSON.stringify(tenant)}'s rows out of them`,
    );
    this.keys = keys;
  }
}

/** The first 5 keys and, past 5, how many in all: how an error's message names many keys. */
export function someKeys(keys: readonly string[]): string {
  return keys.slice(0, 5).join(', ') + (keys.length > 5 ? `, … (${keys.length} in all)` : '');
}

/**
 * True when S3 (or an S3-compatible store) answered with this error code or HTTP status: the
 * SDK names the error by its code, and a store that sends no code leaves only the status.
 */
export function isS3Answer(error: unknown, code: string, status: number): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  return e?.name === code || e?.$metadata?.httpStatusCode === status;
}

/** True for S3's NoSuchBucket answer. */
export function isNoSuchBucket(error: unknown): boolean {
  const e = error as { name?: string; Code?: string } | undefined;
  return e?.name === 'NoSuchBucket' || e?.Code === 'NoSuchBucket';
}

/**
 * A record could not be placed in an archive object (no table name, a tenant it cannot be filed
 * under). It is reported as a per-record failure, so the pipeline retries and finally
 * dead-letters it. A record without a creation time is malformed instead (MalformedRecordError:
 * dead-lettered at once).
 */
export class ArchiveKeyError extends RecordError {
  override name = 'ArchiveKeyError';
  declare readonly eventID: string;
  declare readonly sequenceNumber: string;
  constructor(detail: string, record: { eventID: string; sequenceNumber: string }) {
    super(`cannot archive record ${recordLabel(record)}: ${detail}`, record);
  }
}

/** An archive object (or one of its lines) is not what tidewater wrote: bad gzip, bad JSON, checksum mismatch. */
export class ArchiveFormatError extends TidewaterError {
  override name = 'ArchiveFormatError';
  readonly key: string;
  readonly line: number | undefined;
  constructor(key: string, detail: string, line?: number, options?: { cause?: unknown }) {
    super(`archive object ${key}${line === undefined ? '' : ` line ${line}`}: ${detail}`, options);
    this.key = key;
    this.line = line;
  }
}

/** A record cannot be restored (its stream view carries no image to write back). */
export class RestoreError extends RecordError {
  override name = 'RestoreError';
  constructor(detail: string, record: RecordIdentity) {
    super(`cannot restore ${recordLabel(record)}: ${detail}`, record);
  }
}

/**
 * A write of restoreItems failed (after the client's retries), so the restore stopped. The counts
 * are what was durably written or skipped before it stopped; a re-run skips what was written.
 */
export class RestoreWriteError extends RecordError {
  override name = 'RestoreWriteError';
  readonly written: number;
  readonly skipped: number;
  readonly calls: number;
  /** `record` identifies the (first) record whose write failed. */
  constructor(
    tableName: string,
    record: RecordIdentity,
    progress: { written: number; skipped: number; calls: number },
    options?: { cause?: unknown },
  ) {
    super(
      `restoring into ${tableName} failed at ${recordLabel(record)} ` +
        `(written ${progress.written}, skipped ${progress.skipped}): ${describeError(options?.cause)}`,
      record,
      options,
    );
    this.written = progress.written;
    this.skipped = progress.skipped;
    this.calls = progress.calls;
  }
}

/** `table/dt/hour`, how errors and reports name an hour partition. */
export function hourLabel(table: string, dt: string, hour: string): string {
  return `table=${table}/dt=${dt}/hour=${hour}`;
}

/**
 * An hour partition is still open: late redeliveries may still write into it, so compacting it
 * now would only be repeated. `closesAt` is when it counts as closed (see `closedAfterSeconds`).
 */
export class OpenPartitionError extends TidewaterError {
  override name = 'OpenPartitionError';
  readonly partition: string;
  readonly closesAt: Date;
  constructor(partition: string, closesAt: Date) {
    super(
      `${partition} is still open: records may still arrive in it until ${closesAt.toISOString()} ` +
        '(the hour plus closedAfterSeconds); compact it after that',
    );
    this.partition = partition;
    this.closesAt = closesAt;
  }
}

/**
 * Objects that must be read are in GLACIER or DEEP_ARCHIVE and no restored copy of them is
 * readable: S3 serves them only after a restore (RestoreObject). Thrown before anything is
 * written or deleted, and before anything of the hour holding them is read. `keys` are all such
 * objects found; `inProgress` those of them whose restore was asked for and is still running.
 * Restore them (`restoreArchive`, `tidewater archive restore`), then run again once restored.
 */
export class ArchiveRestoreRequiredError extends TidewaterError {
  override name = 'ArchiveRestoreRequiredError';
  readonly keys: readonly string[];
  readonly inProgress: readonly string[];
  constructor(keys: readonly string[], options?: { cause?: unknown; inProgress?: readonly string[] }) {
    const inProgress = options?.inProgress ?? [];
    super(
      `${keys.length} object(s) to read are in GLACIER / DEEP_ARCHIVE and need a restore first` +
        `${inProgress.length > 0 ? ` (${inProgress.length} restore(s) in progress)` : ''}: ${someKeys(keys)}; ` +
        'restore them with restoreArchive (tidewater archive restore) and run again once restored',
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.keys = keys;
    this.inProgress = inProgress;
  }
}

/**
 * A compaction stopped part-way. Nothing is lost at any stage: the objects it replaces are
 * deleted only after the new objects and the manifest are written, and only those it read. At
 * `stage: 'write'` nothing was deleted; at `stage: 'delete'` the listed keys are still there.
 * Running it again finishes the hour.
 */
export class CompactionIncompleteError extends TidewaterError {
  override name = 'CompactionIncompleteError';
  readonly partition: string;
  readonly stage: 'write' | 'delete';
  readonly manifestKey: string | undefined;
  readonly keys: readonly string[];
  constructor(
    partition: string,
    stage: 'write' | 'delete',
    detail: { manifestKey?: string | undefined; keys?: readonly string[]; cause?: unknown },
  ) {
    const cause = detail.cause;
    const reason = describeError(cause);
    super(
      stage === 'write'
        ? `compacting ${partition} failed while writing (nothing was deleted; run it again): ${reason}`
        : `compacting ${partition}: ${detail.keys?.length ?? 0} replaced object(s) not deleted ` +
            `(manifest ${detail.manifestKey}; run it again to finish): ${reason}`,
      cause === undefined ? undefined : { cause },
    );
    this.partition = partition;
    this.stage = stage;
    this.manifestKey = detail.manifestKey;
    this.keys = detail.keys ?? [];
  }
}

/**
 * Some hours of a range were not compacted (each hour's own error is in `failures`); the others
 * were. The scheduled handler throws it so the run shows in the function's Errors metric.
 */
export class CompactionFailedHoursError extends TidewaterError {
  override name = 'CompactionFailedHoursError';
  readonly failures: readonly { partition: string; error: unknown }[];
  /** What the run did with the other hours. */
  readonly summary: unknown;
  constructor(failures: readonly { partition: string; error: unknown }[], summary?: unknown) {
    const first = failures[0];
    const reason = describeError(first?.error);
    super(`${failures.length} hour partition(s) not compacted; first: ${first?.partition}: ${reason}`);
    this.failures = failures;
    this.summary = summary;
  }
}

/**
 * An erase stopped part-way (a write or delete failed after the client's retries). `done` lists
 * what was already erased; running the same erase again finishes it (it lists what is left).
 */
export class EraseIncompleteError extends TidewaterError {
  override name = 'EraseIncompleteError';
  readonly done: readonly string[];
  constructor(tenant: string, done: readonly string[], options: { cause: unknown }) {
    super(
      `erasing tenant ${JSON.stringify(tenant)} stopped after ${done.length} object(s) (run it again to finish): ${describeError(options.cause)}`,
      options,
    );
    this.done = done;
  }
}
