import { S3Client } from '@aws-sdk/client-s3';
import { Presets, SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError } from 'commander';
import { ArchiveRestoreRequiredError } from '../archive/errors.js';
import { tenantFromPartitionKey } from '../archive/partition.js';
import { type ReplayReport, replayArchive } from '../history/replay-archive.js';
import { overlayEnv } from '../local/servers/process-env.js';
import type { Pipeline } from '../pipeline/engine.js';
import { type AwsTargetFlags, awsTarget, withAwsTarget } from './aws-target.js';
import { EXIT } from './exit-codes.js';
import { type FunctionFlags, functionOptions, functionPipeline } from './function-handler.js';
import { positive } from './parse.js';
import { progressFields } from './progress-rate.js';

interface ReplayFlags extends FunctionFlags, AwsTargetFlags {
  bucket: string;
  table: string;
  prefix?: string;
  from: string;
  to: string;
  tenant?: string;
  tenantKey?: string;
  key?: Record<string, unknown>[];
  checkpoint?: string;
  batchSize: number;
  dryRun?: boolean;
  progress: boolean;
}

function time(text: string): string {
  if (!Number.isFinite(Date.parse(text)))
    throw new InvalidArgumentError(`expected an ISO-8601 time, got ${text}`);
  return text;
}

/** `--key` JSON: one key in DynamoDB JSON (`{"pk":{"S":"a"}}`, exact) or as values (`{"pk":"a"}`); repeatable. */
function keyArgument(text: string, previous: Record<string, unknown>[] = []): Record<string, unknown>[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError('expected a key as JSON, e.g. {"pk":{"S":"acme#1"}}');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new InvalidArgumentError('expected a key as a JSON object of attribute names');
  return [...previous, value as Record<string, unknown>];
}

/** `tidewater archive replay`: archived changes of a range through a function's routes. */
export function archiveReplayCommand(): Command {
  const command = functionOptions(
    new Command('replay'),
    "a createStreamHandler handler to replay through instead of the function's own",
  )
    .description(
      "Replay an S3 archive's changes (TTL deletes, user deletes, or every change: whatever --prefix holds) " +
        "through a stream function's routes, handlers and sinks: per item in the order they happened, each once " +
        "(copies dropped by eventID), every record's origin { source: 'archive' }. With --checkpoint, a rerun " +
        'continues where the last one stopped.',
    )
    .requiredOption('-b, --bucket <name>', 'the archive bucket')
    .requiredOption('-t, --table <name>', 'the table whose archive it is (the key segment table=<name>)')
    .option('-p, --prefix <prefix>', 'the key prefix the archive sink writes under (e.g. archive/)')
    .requiredOption('--from <time>', 'inclusive start of the change-time range (ISO-8601)', time)
    .requiredOption('--to <time>', 'exclusive end of the range (ISO-8601)', time)
    .option('--tenant <id>', "only this tenant's changes (the decoded tenant id)")
    .option(
      '--tenant-key <attribute>',
      "with --tenant: pick the tenant's rows out of unpartitioned objects by this key attribute (tenantFromPartitionKey)",
    )
    .option('--key <json>', 'only this item\'s changes, e.g. {"pk":{"S":"acme#1"}} (repeatable)', keyArgument)
    .option(
      '--checkpoint <file>',
      'resume from and record progress in this file (written after each batch, mode 0600)',
    )
    .option('--batch-size <n>', 'records per pipeline batch', positive, 100)
    .option('--dry-run', 'list the range and check restores; deliver nothing')
    .option('--no-progress', 'no progress bar');
  return withAwsTarget(command).action(async (flags: ReplayFlags) => {
    if (flags.tenantKey !== undefined && flags.tenant === undefined)
      throw new InvalidArgumentError('--tenant-key picks one tenant out of mixed objects: give --tenant too');
    // Before the handler is imported: it and the reader build their clients from these.
    const restoreTarget = overlayEnv(await awsTarget(flags, ['DYNAMODB', 'S3']));
    try {
      await replay(flags);
    } finally {
      restoreTarget();
    }
  });
}

async function replay(flags: ReplayFlags): Promise<void> {
  const { pipeline, restoreEnv } = await functionPipeline(flags);
  const client = new S3Client({});
  try {
    const report = await runWithProgress(pipeline, client, flags);
    printReport(report, flags);
  } catch (error) {
    if (!(error instanceof ArchiveRestoreRequiredError)) throw error;
    process.stderr.write(`${error.name}: nothing was delivered; these objects need a restore first:\n`);
    for (const key of error.keys) process.stderr.write(`  ${key}\n`);
    process.stderr.write(
      `run \`tidewater archive restore\` with the same --bucket, --table, --prefix, --from and --to, then this command again once they are restored\n`,
    );
    process.exitCode = EXIT.incomplete;
  } finally {
    client.destroy();
    restoreEnv();
  }
}

async function runWithProgress(
  pipeline: Pipeline,
  client: S3Client,
  flags: ReplayFlags,
): Promise<ReplayReport> {
  const bar =
    flags.progress && process.stderr.isTTY
      ? new SingleBar(
          { format: '{bar} {value}/{total} objects | {delivered} delivered | {elapsed} | {rate} records/s' },
          Presets.shades_classic,
        )
      : undefined;
  let started = false;
  const startedMs = Date.now();
  try {
    return await replayArchive(pipeline, {
      client,
      bucket: flags.bucket,
      table: flags.table,
      from: flags.from,
      to: flags.to,
      batchSize: flags.batchSize,
      ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }),
      ...(flags.tenant === undefined ? {} : { tenant: flags.tenant }),
      ...(flags.tenantKey === undefined
        ? {}
        : { partitionBy: tenantFromPartitionKey({ attribute: flags.tenantKey }) }),
      ...(flags.key === undefined ? {} : { keys: flags.key }),
      ...(flags.checkpoint === undefined ? {} : { checkpoint: flags.checkpoint }),
      dryRun: flags.dryRun === true,
      onProgress: (p) => {
        if (!bar) return;
        const payload = { delivered: p.delivered, ...progressFields(p.rows, startedMs, Date.now()) };
        if (!started) bar.start(Math.max(p.objectsTotal, 1), 0, payload);
        started = true;
        bar.update(p.objects, payload);
      },
    });
  } finally {
    bar?.stop();
  }
}

function printReport(report: ReplayReport, flags: ReplayFlags): void {
  const where = `${report.source}:`;
  if (flags.dryRun) {
    process.stdout.write(
      `dry run: ${where} ${report.objectsTotal} objects in ${report.hoursTotal} hours; ${report.needRestore.length} need a restore\n`,
    );
    for (const key of report.needRestore) process.stdout.write(`  ${key}\n`);
    process.exitCode = report.objectsTotal === 0 ? EXIT.nothingFound : EXIT.ok;
    return;
  }
  process.stdout.write(
    `${where} ${report.objects}/${report.objectsTotal} objects, ${report.rows} rows read, ${report.delivered} delivered, ` +
      `${report.deadLettered} dead-lettered, ${report.failed} failed, ${report.skippedDuplicates} duplicates skipped, ` +
      `${report.filtered} filtered, ${report.alreadyDone} already done; ${report.hoursDone}/${report.hoursTotal} hours ` +
      `in ${(report.durationMs / 1000).toFixed(1)} s\n`,
  );
  if (report.error !== undefined) process.stdout.write(`  stopped: ${report.error}\n`);
  if (!report.complete) {
    process.stdout.write(
      flags.checkpoint !== undefined
        ? 'incomplete: run the same command again to continue from the checkpoint\n'
        : 'incomplete: give --checkpoint <file> to rerun from where a run stops\n',
    );
    process.exitCode = EXIT.incomplete;
    return;
  }
  if (report.objectsTotal === 0 && report.alreadyDone === 0) {
    process.stderr.write(`found nothing under ${report.source}\n`);
    process.exitCode = EXIT.nothingFound;
    return;
  }
  process.exitCode = EXIT.ok;
}
