import { describeError, TidewaterError } from '../core/errors.js';
import { someKeys } from './layout-errors.js';

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
 * Objects that must be read are in GLACIER or DEEP_ARCHIVE: S3 serves them only after a restore
 * (RestoreObject). Thrown before anything is written or deleted. Restore them, then run again
 * with `restored: true` (`--restored`).
 */
export class ArchiveRestoreRequiredError extends TidewaterError {
  override name = 'ArchiveRestoreRequiredError';
  readonly keys: readonly string[];
  constructor(keys: readonly string[], options?: { cause?: unknown }) {
    super(
      `${keys.length} object(s) to read are in GLACIER / DEEP_ARCHIVE and need a restore first: ${someKeys(keys)}`,
      options,
    );
    this.keys = keys;
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
