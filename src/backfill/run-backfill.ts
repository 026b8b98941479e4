import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { defineOptions } from '../core/options.js';
import type { PipelineConfig } from '../pipeline/config.js';
import { createPipeline, isPipeline, type Pipeline } from '../pipeline/engine.js';
import { regionFromArn } from '../records/convert.js';
import type { Item, LambdaStreamRecord } from '../records/types.js';
import { backfillPipeline } from './backfill-pipeline.js';
import { backfillSequenceNumber, itemRecord, keysOf } from './backfill-record.js';
import {
  checkExportCheckpoint,
  checkpointWriter,
  checkScanCheckpoint,
  openCheckpoint,
} from './checkpoint.js';
import { deliverCounted } from './deliver-batch.js';
import { BackfillError } from './errors.js';
import { backfillExportFile } from './export-file.js';
import { describeTableKeys, tableNameOf } from './key-schema.js';
import { type ExportManifest, readExportManifest } from './manifest.js';
import {
  DELIVERY_OPTIONS,
  type DeliveryOptions,
  EXPORT_READ_OPTIONS,
  type ExportReadOptions,
} from './options.js';
import { scanSegment } from './scan-source.js';

/** Where a backfill reads the table's items: an export to S3, or the table itself by a parallel Scan. */
export type BackfillSource =
  | {
      /** The export's folder, `<prefix>/AWSDynamoDB/<exportId>` (or its manifest-summary.json). */
      readonly export: { readonly bucket: string; readonly prefix: string };
    }
  | {
      /** A table without point-in-time recovery: `segments` Scan segments, `concurrency` of them at once. */
      readonly scan: { readonly table: string; readonly segments?: number; readonly pageSize?: number };
    };

/** A long run's progress, after every batch. */
export interface BackfillProgress {
  readonly itemsRead: number;
  readonly delivered: number;
  readonly deadLettered: number;
  /** Items the export holds (manifest-summary.json's itemCount); undefined for a scan. */
  readonly itemsTotal: number | undefined;
  readonly partsDone: number;
  readonly partsTotal: number;
}

/** What runBackfill did: items read, delivered and failed, and where it stopped. */
export interface BackfillReport {
  readonly source: string;
  readonly itemsRead: number;
  readonly delivered: number;
  readonly deadLettered: number;
  /** Items not done because a batch kept failing; the run stopped there. */
  readonly failed: number;
  /** Data files (export) or segments (scan): done, and in all. */
  readonly partsDone: number;
  readonly partsTotal: number;
  readonly unit: 'files' | 'segments';
  readonly durationMs: number;
  /** Every file or segment is done: the rerun of an incomplete run continues from its checkpoint. */
  readonly complete: boolean;
  /** What stopped a file or segment: its key (or `segment <n>`) and the error, named. */
  readonly errors: readonly { readonly part: string; readonly error: string }[];
}

/** Options of runBackfill: the source (export or parallel Scan), the pipeline and the checkpoint. */
export interface RunBackfillOptions extends DeliveryOptions, ExportReadOptions {
  readonly source: BackfillSource;
  /** The table's key attributes (partition, then sort key). Default: DescribeTable. */
  keyAttributes?: readonly string[];
  /** A checkpoint file: read to resume, written after each batch (mode 0600). Default: none (no resume). */
  checkpoint?: string;
  /** Data files or segments backfilled at once. Default 4. */
  concurrency?: number;
  s3?: S3Client;
  dynamodb?: DynamoDBClient;
  onProgress?: (progress: BackfillProgress) => void;
}

const readOptions = /* @__PURE__ */ defineOptions<RunBackfillOptions>()('runBackfill', {
  ...DELIVERY_OPTIONS,
  ...EXPORT_READ_OPTIONS,
  source: {
    kind: 'custom',
    expected: '{ export: { bucket, prefix } } or { scan: { table, segments? } }',
    check: (v) => {
      const s = v as Record<string, unknown> | null;
      return s !== null && typeof s === 'object' && (s.export !== undefined) !== (s.scan !== undefined);
    },
    required: true,
  },
  keyAttributes: {
    kind: 'custom',
    expected: 'one or two attribute names',
    check: (v) =>
      Array.isArray(v) && v.length > 0 && v.length <= 2 && v.every((a) => typeof a === 'string' && a !== ''),
  },
  checkpoint: { kind: 'nonEmptyString' },
  concurrency: { kind: 'integer', min: 1, max: 256, default: 4 },
  s3: { kind: 'client' },
  dynamodb: { kind: 'client' },
  onProgress: { kind: 'function' },
});

const readScan = /* @__PURE__ */ defineOptions<{ table: string; segments?: number; pageSize?: number }>()(
  'runBackfill',
  {
    table: { kind: 'nonEmptyString', required: true },
    segments: { kind: 'integer', min: 1, max: 1_000_000, default: 4 },
    pageSize: { kind: 'integer', min: 1 },
  },
);

const readExport = /* @__PURE__ */ defineOptions<{ bucket: string; prefix: string }>()('runBackfill', {
  bucket: { kind: 'nonEmptyString', required: true },
  prefix: { kind: 'nonEmptyString', required: true },
});

/** The counters of a run, shared by its files or segments (one process, one event loop). */
interface Tally {
  itemsRead: number;
  delivered: number;
  deadLettered: number;
  failed: number;
  partsDone: number;
  stop: boolean;
  readonly errors: { part: string; error: string }[];
}

type Resolved = ReturnType<typeof readOptions>;

/**
 * Runs a stream function's pipeline — THE config object its createStreamHandler takes, or the
 * Pipeline made from it — over a table's items, from an export or a parallel Scan, in batches of
 * `batchSize`, each a Lambda-like invocation (a partial failure retried from the failed record,
 * `attempts` times). Every record says it came from a backfill (`origin`) and when the snapshot
 * was taken. With `checkpoint`, a rerun continues where the last one stopped, whatever stopped it.
 *
 * Resolves with the report even when a file or segment stopped short (`complete: false`, its error
 * in `errors`); throws for what stops the whole run before it starts (a manifest that is not an
 * export's, an ION export, a checkpoint of another source).
 */
export async function runBackfill<T extends object = Item>(
  config: PipelineConfig<T> | Pipeline,
  options: RunBackfillOptions,
): Promise<BackfillReport> {
  const o = readOptions(options);
  const pipeline = isPipeline(config) ? config : createPipeline(config as PipelineConfig<T>);
  const started = Date.now();
  const tally: Tally = {
    itemsRead: 0,
    delivered: 0,
    deadLettered: 0,
    failed: 0,
    partsDone: 0,
    stop: false,
    errors: [],
  };
  const source = o.source;
  const run =
    'export' in source
      ? await runExport(pipeline, readExport(source.export, 'runBackfill', 'source.export.'), o, tally)
      : await runScan(pipeline, readScan(source.scan, 'runBackfill', 'source.scan.'), o, tally, started);
  return {
    source: run.source,
    itemsRead: tally.itemsRead,
    delivered: tally.delivered,
    deadLettered: tally.deadLettered,
    failed: tally.failed,
    partsDone: tally.partsDone,
    partsTotal: run.partsTotal,
    unit: run.unit,
    durationMs: Date.now() - started,
    complete: tally.partsDone === run.partsTotal,
    errors: tally.errors,
  };
}

function reporter(o: Resolved, tally: Tally, itemsTotal: number | undefined, partsTotal: number) {
  return () =>
    o.onProgress?.({
      itemsRead: tally.itemsRead,
      delivered: tally.delivered,
      deadLettered: tally.deadLettered,
      itemsTotal,
      partsDone: tally.partsDone,
      partsTotal,
    });
}

function stopWith(tally: Tally, part: string, error: unknown): void {
  if (!(error instanceof BackfillError)) throw error;
  tally.errors.push({ part, error: `${error.name}: ${error.message}` });
}

async function runExport(
  pipeline: Pipeline,
  where: { bucket: string; prefix: string },
  o: Resolved,
  tally: Tally,
): Promise<{ source: string; partsTotal: number; unit: 'files' }> {
  const s3 = o.s3 ?? new S3Client({});
  const manifest: ExportManifest = await readExportManifest(s3, where.bucket, where.prefix);
  const { summary, files } = manifest;
  const sourceName = `export ${summary.exportArn}`;
  const checkpoint = await openCheckpoint(o.checkpoint, sourceName);
  checkExportCheckpoint(o.checkpoint, checkpoint, files);
  const saver = checkpointWriter(o.checkpoint, checkpoint);
  const keyAttributes =
    o.keyAttributes ??
    (summary.exportType === 'FULL_EXPORT' && summary.tableArn !== undefined
      ? (await describeTableKeys(o.dynamodb ?? new DynamoDBClient({}), summary.tableArn)).keyAttributes
      : undefined);
  const progress = reporter(o, tally, summary.itemCount, files.length);
  const limit = pLimit(o.concurrency);
  await Promise.all(
    files.map((file, index) =>
      limit(async () => {
        const key = file.dataFileS3Key;
        checkpoint.files[key] ??= { line: 0, done: false };
        const at = checkpoint.files[key];
        if (at.done) {
          tally.partsDone++;
          return;
        }
        if (tally.stop) return;
        let last = { itemsRead: 0, delivered: 0, deadLettered: 0 };
        try {
          const report = await backfillExportFile(
            pipeline,
            {
              bucket: where.bucket,
              key,
              exportType: summary.exportType,
              exportTime: summary.exportTime,
              ...(keyAttributes ? { keyAttributes } : {}),
              md5Checksum: file.md5Checksum,
              itemCount: file.itemCount,
            },
            {
              client: s3,
              ...(o.dynamodb ? { dynamodb: o.dynamodb } : {}),
              batchSize: o.batchSize,
              attempts: o.attempts,
              maxInflateRatio: o.maxInflateRatio,
              fromLine: at.line,
              fileIndex: index,
              view: summary.view,
              ...(summary.tableArn ? { tableArn: summary.tableArn } : {}),
              onProgress: async (p) => {
                tally.itemsRead += p.itemsRead - last.itemsRead;
                tally.delivered += p.delivered - last.delivered;
                tally.deadLettered += p.deadLettered - last.deadLettered;
                last = p;
                at.line = p.line;
                await saver.save();
                progress();
              },
            },
          );
          if (report.complete) {
            at.done = true;
            tally.partsDone++;
          } else {
            tally.failed += report.failed;
            tally.stop = true;
            tally.errors.push({ part: key, error: report.error ?? 'stopped' });
          }
          await saver.save();
          progress();
        } catch (error) {
          stopWith(tally, key, error);
        }
      }),
    ),
  );
  return { source: sourceName, partsTotal: files.length, unit: 'files' };
}

async function runScan(
  pipeline: Pipeline,
  scan: { table: string; segments: number; pageSize: number | undefined },
  o: Resolved,
  tally: Tally,
  started: number,
): Promise<{ source: string; partsTotal: number; unit: 'segments' }> {
  const dynamodb = o.dynamodb ?? new DynamoDBClient({});
  const table = tableNameOf(scan.table);
  const described = await describeTableKeys(dynamodb, scan.table);
  const keyAttributes = o.keyAttributes ?? described.keyAttributes;
  const sourceName = `scan ${table} segments ${scan.segments}`;
  const checkpoint = await openCheckpoint(o.checkpoint, sourceName);
  checkScanCheckpoint(o.checkpoint, checkpoint, scan.segments);
  const saver = checkpointWriter(o.checkpoint, checkpoint);
  // Each item is read at or after this run's start: the time its records say they are from.
  const run = backfillPipeline(pipeline, { source: 'backfill', from: 'scan', snapshotTime: started });
  const context = { tableArn: described.tableArn, region: regionFromArn(described.tableArn) };
  const progress = reporter(o, tally, undefined, scan.segments);
  const limit = pLimit(o.concurrency);
  const segments = Array.from({ length: scan.segments }, (_, s) => s);
  await Promise.all(
    segments.map((segment) =>
      limit(async () => {
        checkpoint.segments[segment] ??= { after: null, items: 0, done: false };
        const at = checkpoint.segments[segment];
        if (at.done) {
          tally.partsDone++;
          return;
        }
        try {
          for await (const page of scanSegment(
            dynamodb,
            table,
            segment,
            scan.segments,
            at.after,
            scan.pageSize,
          )) {
            for (let from = 0; from < page.items.length && !tally.stop; from += o.batchSize) {
              const items = page.items.slice(from, from + o.batchSize);
              const records: LambdaStreamRecord[] = items.map((item, i) => {
                const n = at.items + i + 1;
                const place = {
                  eventID: `scan:${segment}#${n}`,
                  sequenceNumber: backfillSequenceNumber(segment, n),
                };
                return itemRecord(item, keyAttributes, started / 1000, place, context);
              });
              tally.itemsRead += records.length;
              const outcome = await deliverCounted(run, records, o.attempts);
              tally.delivered += outcome.delivered;
              tally.deadLettered += outcome.deadLettered;
              if (outcome.done !== 0) {
                at.items += outcome.done;
                at.after = keysOf(items[outcome.done - 1], keyAttributes) ?? at.after;
              }
              if (outcome.error !== undefined) {
                tally.failed += records.length - outcome.done;
                tally.stop = true;
                tally.errors.push({ part: `segment ${segment}`, error: outcome.error });
              }
              await saver.save();
              progress();
            }
            if (tally.stop) return;
          }
          at.done = true;
          tally.partsDone++;
          await saver.save();
          progress();
        } catch (error) {
          stopWith(tally, `segment ${segment}`, error);
        }
      }),
    ),
  );
  return { source: sourceName, partsTotal: scan.segments, unit: 'segments' };
}
