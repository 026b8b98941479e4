import type { S3Client } from '@aws-sdk/client-s3';
import { type CompactionReport, compactArchive, type HourCompaction } from './compact.js';
import { CompactionFailedHoursError, hourLabel } from './errors.js';
import type { ArchiveObjectFormat, ArchiveStorageClass } from './format.js';
import { scheduledWindow } from './hours.js';
import { HOUR_MS } from './store.js';
import type { TypedColumns } from './typed-columns.js';

/** Options of compactRecentHours: the bucket, table and the hours to look back over. */
export interface RecentHoursOptions {
  client: S3Client;
  bucket: string;
  /** The table segment of the archive's keys (the table's name). */
  table: string;
  /** Archive prefixes to compact (the TTL archive's, and with all-deletes its user-deletes/). */
  prefixes: readonly string[];
  storageClass: ArchiveStorageClass;
  closedAfterSeconds: number;
  /** How many of the most recent closed hours each run covers. */
  lookbackHours: number;
  /** The compacted objects' format (compactArchive's `format`). Default `ndjson`. */
  format?: ArchiveObjectFormat;
  /** With `format: 'parquet'`: compactArchive's `typedColumns`. */
  typedColumns?: TypedColumns;
  /** Default now. */
  now?: number;
}

/** What one scheduled run did. */
export interface RecentHoursSummary {
  window: { from: string; to: string };
  compacted: HourCompaction[];
  /** Hours already compacted (or a single object): a listing each. */
  unchanged: number;
}

/**
 * The scheduled compaction: the `lookbackHours` most recent closed hours of each prefix, one hour
 * at a time, so one hour's failure (a Glacier object, a throttled request) does not hold back the
 * others. An hour already compacted costs a listing; one a failed run left behind is retried by
 * the following runs while it stays in the window. If any hour failed, throws
 * CompactionFailedHoursError once the others are done.
 */
export async function compactRecentHours(options: RecentHoursOptions): Promise<RecentHoursSummary> {
  const now = options.now ?? Date.now();
  const window = scheduledWindow(now, options.closedAfterSeconds, options.lookbackHours);
  const summary: RecentHoursSummary = {
    window: { from: new Date(window.fromMs).toISOString(), to: new Date(window.toMs).toISOString() },
    compacted: [],
    unchanged: 0,
  };
  const failures: { partition: string; error: unknown }[] = [];
  for (const prefix of options.prefixes) {
    for (let hour = window.fromMs; hour < window.toMs; hour += HOUR_MS) {
      let report: CompactionReport;
      try {
        report = await compactArchive({
          client: options.client,
          bucket: options.bucket,
          table: options.table,
          prefix,
          from: hour,
          to: hour + HOUR_MS,
          storageClass: options.storageClass,
          ...(options.format === undefined ? {} : { format: options.format }),
          ...(options.typedColumns === undefined ? {} : { typedColumns: options.typedColumns }),
          closedAfterSeconds: options.closedAfterSeconds,
          now,
        });
      } catch (error) {
        const iso = new Date(hour).toISOString();
        failures.push({
          partition: `${prefix}${hourLabel(options.table, iso.slice(0, 10), iso.slice(11, 13))}`,
          error,
        });
        continue;
      }
      for (const done of report.hours) {
        if (done.status === 'compacted') summary.compacted.push(done);
        else summary.unchanged++;
      }
    }
  }
  if (failures.length > 0) throw new CompactionFailedHoursError(failures, summary);
  return summary;
}
