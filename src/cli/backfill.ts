import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Presets, SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError } from 'commander';
import { readExportManifest } from '../backfill/manifest.js';
import { type BackfillReport, type BackfillSource, runBackfill } from '../backfill/run-backfill.js';
import { overlayEnv } from '../local/servers/process-env.js';
import type { Pipeline } from '../pipeline/engine.js';
import { type AwsTargetFlags, awsTarget, withAwsTarget } from './aws-target.js';
import { EXIT } from './exit-codes.js';
import { type FunctionFlags, functionOptions, functionPipeline } from './function-handler.js';
import { positive } from './parse.js';
import { progressFields } from './progress-rate.js';
import { describeNamedTable } from './table-lookup.js';

interface BackfillFlags extends FunctionFlags, AwsTargetFlags {
  fromExport?: { bucket: string; prefix: string };
  scan?: string;
  segments: number;
  checkpoint?: string;
  batchSize: number;
  concurrency: number;
  key?: string[];
  dryRun?: boolean;
  progress: boolean;
}

/** `s3://bucket/prefix` → bucket and prefix. */
function s3Url(text: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(text);
  if (!match) throw new InvalidArgumentError(`expected s3://<bucket>/<export folder>, got ${text}`);
  return { bucket: match[1]!, prefix: match[2]! };
}

export function backfillCommand(): Command {
  const command = functionOptions(
    new Command('backfill'),
    "a createStreamHandler handler to run instead of the function's own",
  )
    .description(
      "Run a stream function's routes, handlers and sinks over a table's existing items: from a DynamoDB export " +
        'to S3 (DYNAMODB_JSON, full or incremental) or a parallel Scan. Each record says it came from a backfill ' +
        '(record.origin). With --checkpoint, a rerun continues where the last one stopped.',
    )
    .option(
      '--from-export <s3url>',
      'the export folder, s3://<bucket>/<prefix>/AWSDynamoDB/<exportId>',
      s3Url,
    )
    .option('--scan <table>', 'scan this table instead (for tables without point-in-time recovery)')
    .option('--segments <n>', 'parallel Scan segments', positive, 4)
    .option(
      '--checkpoint <file>',
      'resume from and record progress in this file (written after each batch, mode 0600)',
    )
    .option('--batch-size <n>', 'records per pipeline batch', positive, 100)
    .option('--concurrency <n>', 'data files or segments at once', positive, 4)
    .option('--key <attributes...>', "the table's key attributes (default: DescribeTable)")
    .option('--dry-run', 'read the manifest (or describe the scan) and the handler, run nothing')
    .option('--no-progress', 'no progress bar');
  return withAwsTarget(command).action(async (flags: BackfillFlags) => {
    if ((flags.fromExport === undefined) === (flags.scan === undefined))
      throw new InvalidArgumentError('give exactly one of --from-export and --scan');
    // Before the handler is imported: it and the reader build their clients from these.
    const restoreTarget = overlayEnv(await awsTarget(flags, ['DYNAMODB', 'S3']));
    try {
      await backfill(flags);
    } finally {
      restoreTarget();
    }
  });
}

async function backfill(flags: BackfillFlags): Promise<void> {
  const source: BackfillSource =
    flags.fromExport !== undefined
      ? { export: flags.fromExport }
      : { scan: { table: flags.scan!, segments: flags.segments } };
  if (flags.scan !== undefined) await checkTable(flags.scan);
  const { pipeline, restoreEnv } = await functionPipeline(flags);
  try {
    if (flags.dryRun) {
      await describePlan(source, flags);
      process.exitCode = EXIT.ok;
      return;
    }
    const report = await runWithProgress(pipeline, source, flags);
    printReport(report, flags.checkpoint !== undefined);
    process.exitCode = report.complete ? EXIT.ok : EXIT.incomplete;
  } finally {
    restoreEnv();
  }
}

/** A mistyped --scan table fails here, named with the nearest that exist, before the handler loads. */
async function checkTable(table: string): Promise<void> {
  const dynamodb = new DynamoDBClient({});
  try {
    await describeNamedTable(dynamodb, table, '--scan');
  } finally {
    dynamodb.destroy();
  }
}

async function describePlan(source: BackfillSource, flags: BackfillFlags): Promise<void> {
  if ('export' in source) {
    const { S3Client } = await import('@aws-sdk/client-s3');
    const m = await readExportManifest(new S3Client({}), source.export.bucket, source.export.prefix);
    process.stdout.write(
      `dry run: ${m.summary.exportType} ${m.summary.exportArn} at ${new Date(m.summary.exportTime).toISOString()}: ` +
        `${m.files.length} data files, ${m.summary.itemCount ?? '?'} items; batches of ${flags.batchSize}\n`,
    );
  } else {
    process.stdout.write(
      `dry run: scan ${source.scan.table} in ${flags.segments} segments, ${flags.concurrency} at once; batches of ${flags.batchSize}\n`,
    );
  }
}

async function runWithProgress(
  pipeline: Pipeline,
  source: BackfillSource,
  flags: BackfillFlags,
): Promise<BackfillReport> {
  const bar =
    flags.progress && process.stderr.isTTY
      ? new SingleBar(
          { format: '{bar} {value}/{total} items | {parts} | {elapsed} | {rate} items/s' },
          Presets.shades_classic,
        )
      : undefined;
  let started = false;
  const startedMs = Date.now();
  try {
    return await runBackfill(pipeline, {
      source,
      batchSize: flags.batchSize,
      concurrency: flags.concurrency,
      ...(flags.checkpoint ? { checkpoint: flags.checkpoint } : {}),
      ...(flags.key ? { keyAttributes: flags.key } : {}),
      onProgress: (p) => {
        if (!bar) return;
        const payload = {
          parts: `${p.partsDone}/${p.partsTotal} ${'export' in source ? 'files' : 'segments'}`,
          ...progressFields(p.itemsRead, startedMs, Date.now()),
        };
        if (!started) bar.start(p.itemsTotal ?? 0, 0, payload);
        started = true;
        if (p.itemsTotal === undefined) bar.setTotal(Math.max(p.itemsRead, 1));
        bar.update(p.itemsRead, payload);
      },
    });
  } finally {
    bar?.stop();
  }
}

function printReport(report: BackfillReport, checkpointed: boolean): void {
  process.stdout.write(
    `${report.source}: ${report.itemsRead} items read, ${report.delivered} delivered, ${report.deadLettered} dead-lettered, ` +
      `${report.failed} failed; ${report.partsDone}/${report.partsTotal} ${report.unit} done in ${(report.durationMs / 1000).toFixed(1)} s\n`,
  );
  for (const { part, error } of report.errors) process.stdout.write(`  ${part}: ${error}\n`);
  if (!report.complete)
    process.stdout.write(
      checkpointed
        ? 'incomplete: run the same command again to continue from the checkpoint\n'
        : 'incomplete: give --checkpoint <file> to rerun from where a run stops\n',
    );
}
