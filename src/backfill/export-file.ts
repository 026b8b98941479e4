import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { defineOptions } from '../core/options.js';
import type { PipelineConfig } from '../pipeline/config.js';
import type { Pipeline } from '../pipeline/engine.js';
import { regionFromArn } from '../records/convert.js';
import type { Item } from '../records/types.js';
import { backfillPipeline } from './backfill-pipeline.js';
import { type DataFileLines, exportLineRecord, type IncrementalView } from './backfill-record.js';
import {
  BackfillError,
  CheckpointPastEndError,
  ExportFileMismatchError,
  KeySchemaUnknownError,
} from './errors.js';
import { exportLineRuns } from './export-lines.js';
import { FileBatch } from './file-batch.js';
import { describeTableKeys } from './key-schema.js';
import { type ExportType, readExportSummary, summaryKeyOfDataFile } from './manifest.js';
import {
  DELIVERY_OPTIONS,
  type DeliveryOptions,
  EXPORT_READ_OPTIONS,
  type ExportReadOptions,
} from './options.js';

/** One data file of an export, as manifest-files.json and manifest-summary.json name it. */
export interface ExportFile {
  readonly bucket: string;
  /** The object key: manifest-files.json's `dataFileS3Key`. */
  readonly key: string;
  readonly exportType: ExportType;
  /** Epoch milliseconds: manifest-summary.json's `exportTime` (the snapshot's time). */
  readonly exportTime: number;
  /**
   * The table's key attributes (partition, then sort key), from which a full export's items get
   * their Keys. Default: read from DynamoDB (DescribeTable on the table manifest-summary.json names).
   */
  readonly keyAttributes?: readonly string[];
  /** manifest-files.json's `md5Checksum` (base64 of the object's MD5): checked as the file streams. */
  readonly md5Checksum?: string;
  /** manifest-files.json's `itemCount`: the file's lines holding an item, checked as it streams. */
  readonly itemCount?: number;
}

/** How far a file's backfill has come, after each batch (what a checkpoint records). */
export interface ExportFileProgress {
  readonly key: string;
  /** Lines done: every item on them delivered or dead-lettered. */
  readonly line: number;
  readonly itemsRead: number;
  readonly delivered: number;
  readonly deadLettered: number;
}

/** What backfillExportFile did with one data file. */
export interface ExportFileReport extends ExportFileProgress {
  /** Items not done because a batch kept failing (the run stopped at the first of them). */
  readonly failed: number;
  /** Every line of the file is done. */
  readonly complete: boolean;
  /** Why the file stopped short (the failing record and the error's name), when it did. */
  readonly error?: string;
}

/** Options of backfillExportFile: one data file of an export through a pipeline. */
export interface BackfillExportFileOptions extends DeliveryOptions, ExportReadOptions {
  /** Default: a new S3Client (its endpoint from AWS_ENDPOINT_URL_S3 like every SDK client). */
  client?: S3Client;
  /** For DescribeTable when `keyAttributes` is not given. Default: a new DynamoDBClient. */
  dynamodb?: DynamoDBClient;
  /** Lines already done (a checkpoint's `line`): reading resumes after them. Default 0. */
  fromLine?: number;
  /** The file's number in its export (manifest-files.json order): the sequence numbers' source part. Default 0. */
  fileIndex?: number;
  /** An incremental export's view type (manifest-summary.json's `outputView`). Default NEW_AND_OLD_IMAGES. */
  view?: IncrementalView;
  /** The table's ARN, each record's eventSourceARN. Default: manifest-summary.json's, when it is read. */
  tableArn?: string;
  /** Called after each batch is done, with how far the file has come. */
  onProgress?: (progress: ExportFileProgress) => void | Promise<void>;
}

const readOptions = /* @__PURE__ */ defineOptions<BackfillExportFileOptions>()('backfillExportFile', {
  ...DELIVERY_OPTIONS,
  ...EXPORT_READ_OPTIONS,
  client: { kind: 'client' },
  dynamodb: { kind: 'client' },
  fromLine: { kind: 'integer', min: 0, default: 0 },
  fileIndex: { kind: 'integer', min: 0, max: 999_999, default: 0 },
  view: { kind: 'enum', values: ['NEW_AND_OLD_IMAGES', 'NEW_IMAGE'], default: 'NEW_AND_OLD_IMAGES' },
  tableArn: { kind: 'nonEmptyString' },
  onProgress: { kind: 'function' },
});

const readFile = /* @__PURE__ */ defineOptions<ExportFile>()('backfillExportFile', {
  bucket: { kind: 'nonEmptyString', required: true },
  key: { kind: 'nonEmptyString', required: true },
  exportType: { kind: 'enum', values: ['FULL_EXPORT', 'INCREMENTAL_EXPORT'], required: true },
  exportTime: { kind: 'number', min: 0, required: true },
  keyAttributes: {
    kind: 'custom',
    expected: 'a non-empty list of attribute names',
    check: (v) =>
      Array.isArray(v) && v.length > 0 && v.length <= 2 && v.every((a) => typeof a === 'string' && a !== ''),
  },
  md5Checksum: { kind: 'nonEmptyString' },
  itemCount: { kind: 'integer', min: 0 },
});

async function tableOf(
  file: ExportFile,
  client: S3Client,
  dynamodb: DynamoDBClient | undefined,
  tableArn: string | undefined,
): Promise<{ keyAttributes: readonly string[]; tableArn: string | undefined }> {
  if (file.keyAttributes !== undefined || file.exportType === 'INCREMENTAL_EXPORT')
    return { keyAttributes: file.keyAttributes ?? [], tableArn };
  const summaryKey = summaryKeyOfDataFile(file.key);
  const arn = tableArn ?? (summaryKey && (await readExportSummary(client, file.bucket, summaryKey)).tableArn);
  if (arn === undefined)
    throw new KeySchemaUnknownError(
      `${file.key}: give keyAttributes (no manifest-summary.json names the table)`,
    );
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  return describeTableKeys(dynamodb ?? new DynamoDBClient({}), arn);
}

/**
 * Backfills one data file of a DynamoDB export (DYNAMODB_JSON, gzip) through a pipeline — the
 * same config object the function's stream handler takes, or the Pipeline made from it: each
 * line becomes a record with the backfill's `origin`, in batches of `batchSize`, a partial
 * failure retried from the failed record. The file is streamed: memory holds one batch.
 *
 * Resolves with a report whether or not every line is done (`complete`, `failed`, `error`); throws a
 * BackfillError for input that no retry can fix — a truncated gzip, a line that is not JSON, a
 * missing object — naming the file and line, after delivering the lines before it (`onProgress`
 * has seen them). An item the line holds malformed is dead-lettered, its eventID `<key>#<line>`.
 */
export async function backfillExportFile<T extends object = Item>(
  pipeline: Pipeline | PipelineConfig<T>,
  file: ExportFile,
  options?: BackfillExportFileOptions,
): Promise<ExportFileReport> {
  const f = readFile(file);
  const o = readOptions(options);
  const client = o.client ?? new S3Client({});
  const table = await tableOf(f, client, o.dynamodb, o.tableArn);
  const incremental = f.exportType === 'INCREMENTAL_EXPORT';
  const run = backfillPipeline(pipeline, {
    source: 'backfill',
    from: incremental ? 'incremental-export' : 'export',
    snapshotTime: f.exportTime,
  });
  const lines: DataFileLines = {
    key: f.key,
    fileIndex: o.fileIndex,
    incremental,
    view: o.view,
    keyAttributes: table.keyAttributes,
    snapshotSeconds: f.exportTime / 1000,
    context: { tableArn: table.tableArn, region: regionFromArn(table.tableArn) },
  };
  const batch = new FileBatch(run, {
    key: f.key,
    fromLine: o.fromLine,
    batchSize: o.batchSize,
    attempts: o.attempts,
    onProgress: o.onProgress,
  });
  let last = o.fromLine;
  let seen = 0;
  try {
    // The lines come a decoded chunk at a time: the work per line is synchronous, an await per chunk
    // (and per batch delivered), not per line.
    read: for await (const runOfLines of exportLineRuns(client, f.bucket, f.key, {
      md5Checksum: f.md5Checksum,
      itemCount: f.itemCount,
      maxInflateRatio: o.maxInflateRatio,
    }))
      for (const { line, text } of runOfLines) {
        seen = line;
        if (line <= o.fromLine) continue;
        last = line;
        if (text === '') continue;
        if (batch.add(exportLineRecord(lines, text, line), line, text.length) && !(await batch.flush(line)))
          break read;
      }
  } catch (error) {
    // The lines before a bad one are good: they are delivered (and checkpointed) first. Not so when
    // the file is not the manifest's: which of its lines are damaged is unknown.
    if (error instanceof BackfillError && !(error instanceof ExportFileMismatchError) && batch.pending !== 0)
      await batch.flush(batch.lastLine);
    throw error;
  }
  // Every line was read (nothing stopped short) yet fewer than the checkpoint says are done.
  if (batch.stopped === undefined && seen < o.fromLine)
    throw new CheckpointPastEndError(f.key, o.fromLine, seen);
  if (batch.stopped === undefined) await batch.flush(last);
  const stopped = batch.stopped;
  return {
    ...batch.progress,
    failed: stopped?.failed ?? 0,
    complete: stopped === undefined,
    ...(stopped === undefined ? {} : { error: stopped.error }),
  };
}
