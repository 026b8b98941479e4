import { S3Client } from '@aws-sdk/client-s3';
import {
  ARCHIVE_STORAGE_CLASSES,
  type ArchiveObjectFormat,
  type ArchiveStorageClass,
} from '../archive/format.js';
import { DEFAULT_CLOSED_AFTER_SECONDS } from '../archive/hours.js';
import {
  compactRecentHours,
  type RecentHoursOptions,
  type RecentHoursSummary,
} from '../archive/scheduled.js';
import { checkTypedColumns, type TypedColumns } from '../archive/typed-columns.js';
import { defineEnvironment, type Environment } from '../core/options.js';
import { ARCHIVE_ROUTES, type ArchiveRoutes, archivePrefixes, clientRetry } from './archive-settings.js';
import { HandlerConfigError } from './config-error.js';
import { KEY_PREFIX_OPTION } from './key-prefix.js';

export type CompactionHandlerConfig = Omit<RecentHoursOptions, 'client' | 'now'>;

/** The variables serverless.yml passes to compactArchive (infra/settings.yml names them). */
const readEnvironment = /* @__PURE__ */ defineEnvironment<{
  ARCHIVE_BUCKET: string;
  ARCHIVE_PREFIX?: string;
  ARCHIVE_ROUTES?: ArchiveRoutes;
  TABLE_NAME: string;
  STORAGE_CLASS?: ArchiveStorageClass;
  COMPACT_AFTER_SECONDS?: number;
  COMPACT_LOOKBACK_HOURS?: number;
  COMPACT_FORMAT?: ArchiveObjectFormat;
  COMPACT_TYPED_COLUMNS?: string;
}>({ error: (message, variable) => new HandlerConfigError(variable ?? '', message) })('compactArchive', {
  ARCHIVE_BUCKET: { kind: 'nonEmptyString', required: true },
  ARCHIVE_PREFIX: { ...KEY_PREFIX_OPTION, default: 'archive/' },
  ARCHIVE_ROUTES: { kind: 'enum', values: ARCHIVE_ROUTES, default: 'ttl-deletes' },
  TABLE_NAME: { kind: 'nonEmptyString', required: true },
  STORAGE_CLASS: { kind: 'enum', values: ARCHIVE_STORAGE_CLASSES, default: 'STANDARD' },
  COMPACT_AFTER_SECONDS: { kind: 'integer', min: 3600, default: DEFAULT_CLOSED_AFTER_SECONDS },
  COMPACT_LOOKBACK_HOURS: { kind: 'integer', min: 1, max: 24 * 14, default: 48 },
  COMPACT_FORMAT: { kind: 'enum', values: ['ndjson', 'parquet'] as const, default: 'ndjson' },
  COMPACT_TYPED_COLUMNS: { kind: 'nonEmptyString' },
});

/** `amount:number,status:string`: COMPACT_TYPED_COLUMNS as compactArchive's `typedColumns`. */
function typedColumnsOf(text: string): TypedColumns {
  const columns: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const at = pair.lastIndexOf(':');
    columns[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  try {
    return checkTypedColumns('compactArchive', columns);
  } catch (error) {
    throw new HandlerConfigError('COMPACT_TYPED_COLUMNS', (error as Error).message);
  }
}

/** The settings serverless.yml passes; a bad one fails the cold start, naming the variable. */
export function readCompactionConfig(env: Environment): CompactionHandlerConfig {
  const e = readEnvironment(env);
  const prefix = e.ARCHIVE_PREFIX;
  return {
    bucket: e.ARCHIVE_BUCKET,
    table: e.TABLE_NAME,
    // The archive handler writes user deletes (all-deletes) or the change log (every-change) there.
    prefixes: archivePrefixes(e.ARCHIVE_ROUTES, prefix),
    storageClass: e.STORAGE_CLASS,
    closedAfterSeconds: e.COMPACT_AFTER_SECONDS,
    lookbackHours: e.COMPACT_LOOKBACK_HOURS,
    format: e.COMPACT_FORMAT,
    ...(e.COMPACT_TYPED_COLUMNS === undefined
      ? {}
      : { typedColumns: typedColumnsOf(e.COMPACT_TYPED_COLUMNS) }),
  };
}

/** One JSON line per run (with what failed, when something did), then the run's own result. */
export function createCompactionHandler(config: CompactionHandlerConfig, client: S3Client) {
  return async (): Promise<RecentHoursSummary> => {
    const log = (summary: RecentHoursSummary | undefined, failed: number) =>
      process.stdout.write(
        `${JSON.stringify({
          message: 'archive compaction run',
          ...summary?.window,
          compacted: summary?.compacted.length ?? 0,
          unchanged: summary?.unchanged ?? 0,
          failed,
          duplicatesRemoved: summary?.compacted.reduce((n, h) => n + h.duplicates, 0) ?? 0,
        })}\n`,
      );
    try {
      const summary = await compactRecentHours({ ...config, client });
      log(summary, 0);
      return summary;
    } catch (error) {
      const e = error as { summary?: RecentHoursSummary; failures?: unknown[] };
      log(e.summary, e.failures?.length ?? 1);
      throw error;
    }
  };
}

// Built once per container: a bad setting fails the init; the client is reused by warm invocations.
export const handler = createCompactionHandler(
  readCompactionConfig(process.env),
  new S3Client(clientRetry()),
);
