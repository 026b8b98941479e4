import { S3Client } from '@aws-sdk/client-s3';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  ARCHIVE_RESTORE_TIERS,
  type ArchiveRestoreTier,
  restoreArchive,
} from '../archive/restore-archive.js';
import { overlayEnv } from '../local/servers/process-env.js';
import { type AwsTargetFlags, awsTarget, withAwsTarget } from './aws-target.js';
import { EXIT } from './exit-codes.js';
import { positive } from './parse.js';

// `tidewater archive restore`: which objects of a range sit in GLACIER / DEEP_ARCHIVE, and a
// RestoreObject for each that has neither a restore running nor a restored copy. Run it again
// to see the restores' progress (it asks for nothing twice); read once nothing is in progress.

interface RestoreFlags extends AwsTargetFlags {
  bucket: string;
  table: string;
  prefix?: string;
  from: string;
  to: string;
  tenant?: string;
  tier: ArchiveRestoreTier;
  days: number;
  dryRun?: boolean;
}

function time(text: string): string {
  if (!Number.isFinite(Date.parse(text)))
    throw new InvalidArgumentError(`expected an ISO-8601 time, got ${text}`);
  return text;
}

/** A one-line summary for the terminal; the JSON report on stdout is for scripts. */
function summary(report: Awaited<ReturnType<typeof restoreArchive>>): string {
  const mb = (report.requestedBytes / 1_000_000).toFixed(1);
  const requested = report.dryRun ? 'would request' : 'requested';
  return (
    `${report.archived.length} archived object(s) in range: ${report.requested.length} restore(s) ${requested} ` +
    `(${report.tier}, ${report.days} day(s), ${mb} MB), ${report.inProgress.length} in progress, ` +
    `${report.restored.length} restored; ${report.notArchived} other object(s) need none` +
    (report.requested.length + report.inProgress.length > 0 ? '; read them once restored\n' : '\n')
  );
}

/** The `restore` subcommand of `tidewater archive`. */
export function restoreCommand(): Command {
  return withAwsTarget(new Command('restore'))
    .description(
      'List the GLACIER / DEEP_ARCHIVE objects of a time range and ask S3 to restore each that has no restore ' +
        'running or done (RestoreObject; charged per request and per GB by tier: docs/archive.md). Safe to repeat. ' +
        'Prints a JSON report; with --dry-run, lists only.',
    )
    .requiredOption('-b, --bucket <name>', 'the archive bucket')
    .requiredOption('-t, --table <name>', 'the table whose archive it is (the key segment table=<name>)')
    .option('-p, --prefix <prefix>', 'the key prefix the archive sink writes under (e.g. archive/)')
    .requiredOption('--from <time>', 'start of the record-time range (inclusive, ISO-8601)', time)
    .requiredOption('--to <time>', 'end of the range (exclusive)', time)
    .option(
      '--tenant <id>',
      'only the objects a read of this tenant fetches (its own and unpartitioned ones)',
    )
    .addOption(
      new Option(
        '--tier <tier>',
        'retrieval tier: Expedited (minutes), Standard (hours), Bulk (cheapest, slowest)',
      )
        .choices(ARCHIVE_RESTORE_TIERS)
        .makeOptionMandatory(),
    )
    .requiredOption('--days <n>', 'days each restored copy stays readable', positive)
    .option('--dry-run', 'list what needs a restore; request nothing')
    .action(async (flags: RestoreFlags) => {
      const restoreEnv = overlayEnv(await awsTarget(flags, ['S3']));
      const client = new S3Client({});
      try {
        const report = await restoreArchive({
          client,
          bucket: flags.bucket,
          table: flags.table,
          ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }),
          from: flags.from,
          to: flags.to,
          ...(flags.tenant === undefined ? {} : { tenant: flags.tenant }),
          tier: flags.tier,
          days: flags.days,
          dryRun: flags.dryRun === true,
        });
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        process.stderr.write(summary(report));
        if (report.archived.length === 0 && report.notArchived === 0) {
          // Nothing at all in range: a missing --prefix or a mistyped table, as for compact and erase.
          const where = `s3://${flags.bucket}/${flags.prefix ?? ''}`;
          process.stderr.write(
            `found nothing under ${where}table=${flags.table}/ or ${where}parquet/table=${flags.table}/ from ${flags.from} to ${flags.to}\n`,
          );
          process.exitCode = EXIT.nothingFound;
          return;
        }
        process.exitCode = EXIT.ok;
      } finally {
        client.destroy();
        restoreEnv();
      }
    });
}
