import { S3Client } from '@aws-sdk/client-s3';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  ARCHIVE_STORAGE_CLASSES,
  type ArchiveObjectFormat,
  type ArchiveStorageClass,
} from '../archive/format.js';
import {
  closesAt,
  DEFAULT_CLOSED_AFTER_SECONDS,
  floorHour,
  parseHour,
  wholeHours,
} from '../archive/hours.js';
import {
  CompactionIncompleteError,
  compactArchive,
  EraseIncompleteError,
  eraseTenant,
} from '../archive/index.js';
import { tenantFromPartitionKey } from '../archive/partition.js';
import { HOUR_MS } from '../archive/store.js';
import type { TypedColumnKind } from '../archive/typed-columns.js';
import { overlayEnv } from '../local/servers/process-env.js';
import { archiveReplayCommand } from './archive-replay.js';
import { restoreCommand } from './archive-restore.js';
import { type AwsTargetFlags, awsTarget, withAwsTarget } from './aws-target.js';
import { EXIT } from './exit-codes.js';
import { integer, positive } from './parse.js';

interface CommonFlags extends AwsTargetFlags {
  bucket: string;
  table: string;
  prefix?: string;
  tenantKey?: string;
  restored?: boolean;
  dryRun?: boolean;
}

interface CompactFlags extends CommonFlags {
  hour?: string;
  from?: string;
  to?: string;
  closedAfter?: number;
  maxObjectBytes?: number;
  storageClass?: ArchiveStorageClass;
  format?: ArchiveObjectFormat;
  typedColumn?: Record<string, TypedColumnKind>;
}

/** `--typed-column amount:number`, repeated: the Parquet objects' typed item columns. */
function typedColumn(
  value: string,
  previous: Record<string, TypedColumnKind> = {},
): Record<string, TypedColumnKind> {
  const at = value.lastIndexOf(':');
  const name = value.slice(0, at);
  const kind = value.slice(at + 1);
  if (at <= 0 || (kind !== 'string' && kind !== 'boolean' && kind !== 'number')) {
    throw new InvalidArgumentError('expected <attribute>:string, <attribute>:boolean or <attribute>:number');
  }
  return { ...previous, [name]: kind };
}

interface EraseFlags extends CommonFlags {
  tenant: string;
  from: string;
  to: string;
  deadLetterPrefix?: string;
  deadLetterBucket?: string;
}

function time(text: string): string {
  if (!Number.isFinite(Date.parse(text)))
    throw new InvalidArgumentError(`expected an ISO-8601 time, got ${text}`);
  return text;
}

/** The options every archive subcommand shares. */
function common(command: Command): Command {
  return withAwsTarget(command)
    .requiredOption('-b, --bucket <name>', 'the archive bucket')
    .requiredOption('-t, --table <name>', 'the table whose archive it is (the key segment table=<name>)')
    .option('-p, --prefix <prefix>', 'the key prefix the archive sink writes under (e.g. archive/)')
    .option(
      '--tenant-key <attribute>',
      'partition by tenant: the tenant id is the text before the first # of this key attribute (tenantFromPartitionKey)',
    )
    .option('--restored', 'GLACIER / DEEP_ARCHIVE objects in range were restored: read them')
    .option('--dry-run', 'report what would be written and deleted; change nothing');
}

function partitionBy(flags: CommonFlags) {
  return flags.tenantKey === undefined
    ? {}
    : { partitionBy: tenantFromPartitionKey({ attribute: flags.tenantKey }) };
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** The archive and the run's choices, from the flags every subcommand shares. */
function target(flags: CommonFlags, client: S3Client) {
  return {
    client,
    bucket: flags.bucket,
    table: flags.table,
    ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }),
    ...partitionBy(flags),
    restored: flags.restored === true,
    dryRun: flags.dryRun === true,
  };
}

/** Where the archive's objects of the table are: its NDJSON root and its Parquet root. */
function tableLocation(flags: CommonFlags): string {
  const prefix = `s3://${flags.bucket}/${flags.prefix ?? ''}`;
  return `${prefix}table=${flags.table}/ or ${prefix}parquet/table=${flags.table}/`;
}

/**
 * Runs one operation with a client of its own and prints its report as JSON. A run stopped
 * part-way: what was done is safe, a rerun finishes. Exit 5, like an aggregation left incomplete.
 */
async function printReport<R>(
  flags: AwsTargetFlags,
  run: (client: S3Client) => Promise<R>,
  nothing: { found: (report: R) => boolean; where: string },
): Promise<void> {
  const restoreEnv = overlayEnv(await awsTarget(flags, ['S3']));
  const client = new S3Client({});
  try {
    const report = await run(client);
    print(report);
    // An erase that erased nothing reports success otherwise: dangerous when the cause is a
    // missing --prefix or a mistyped table, so say where it looked and exit non-zero.
    if (nothing.found(report)) {
      process.stderr.write(`found nothing under ${nothing.where}\n`);
      process.exitCode = EXIT.nothingFound;
      return;
    }
    process.exitCode = EXIT.ok;
  } catch (error) {
    if (error instanceof CompactionIncompleteError || error instanceof EraseIncompleteError) {
      process.stderr.write(`${error.name}: ${error.message}\n`);
      process.exitCode = EXIT.incomplete;
      return;
    }
    throw error;
  } finally {
    client.destroy();
    restoreEnv();
  }
}

function compactCommand(): Command {
  const command = common(new Command('compact'))
    .description(
      'Rewrite closed hour partitions into as few objects as the size bound allows, each row once, then delete ' +
        'the objects replaced (a manifest first). Safe to repeat; prints a JSON report.',
    )
    .option('--hour <hour>', 'one hour partition, e.g. 2026-01-15T03')
    .option('--from <time>', 'with --to: every hour overlapping [from, to)', time)
    .option('--to <time>', 'end of the range (exclusive)', time)
    .option(
      '--closed-after <seconds>',
      'an hour is closed this long after its end (default 90000: 25 hours)',
      integer,
    )
    .option('--max-object-bytes <n>', 'bound on one object before gzip (default 16 MiB)', positive)
    .addOption(
      new Option('--storage-class <class>', 'of the objects written').choices(ARCHIVE_STORAGE_CLASSES),
    )
    .addOption(
      new Option('--format <format>', 'of the objects written (default ndjson)').choices([
        'ndjson',
        'parquet',
      ]),
    )
    .option(
      '--typed-column <attribute:type>',
      'with --format parquet: an item_<attribute> column (string, boolean or number); repeatable',
      typedColumn,
    );
  return command.action(async (flags: CompactFlags) => {
    const ranged = flags.from !== undefined || flags.to !== undefined;
    if (
      (flags.hour !== undefined) === ranged ||
      (ranged && (flags.from === undefined || flags.to === undefined))
    ) {
      return command.error('error: give --hour, or --from and --to');
    }
    let range: { from: number | string; to: number | string };
    let open: OpenHours | undefined;
    if (flags.hour === undefined) {
      // A range ending in hours still open: the closed ones are compacted, the open ones reported.
      const split = splitOpenHours(flags.from as string, flags.to as string, flags.closedAfter, Date.now());
      range = split.closed;
      open = split.open;
    } else {
      const hour = parseHour(flags.hour);
      if (hour === undefined)
        return command.error(`error: --hour ${flags.hour}: expected e.g. 2026-01-15T03`);
      range = { from: hour.fromMs, to: hour.toMs };
    }
    await printReport(
      flags,
      async (client) => {
        const report = await compactArchive({
          ...target(flags, client),
          ...range,
          ...(flags.closedAfter === undefined ? {} : { closedAfterSeconds: flags.closedAfter }),
          ...(flags.maxObjectBytes === undefined ? {} : { maxObjectBytes: flags.maxObjectBytes }),
          ...(flags.storageClass === undefined ? {} : { storageClass: flags.storageClass }),
          ...(flags.format === undefined ? {} : { format: flags.format }),
          ...(flags.typedColumn === undefined ? {} : { typedColumns: flags.typedColumn }),
        });
        if (open === undefined) return report;
        process.stderr.write(
          `skipped ${open.hours} hour${open.hours === 1 ? '' : 's'} still open (${open.from} to ${open.to}): ` +
            `the first closes at ${open.firstClosesAt}; compact ${open.hours === 1 ? 'it' : 'them'} after that\n`,
        );
        return { ...report, skippedOpen: open };
      },
      {
        found: (report) => report.hours.every((hour) => hour.objectsRead === 0),
        where: `${tableLocation(flags)} (${flags.hour === undefined ? `${flags.from} to ${flags.to}` : `hour ${flags.hour}`})`,
      },
    );
  });
}

/** The open hours at the end of a compaction range, as the report names them. */
interface OpenHours {
  /** The first open hour's start and the range's end (ISO-8601). */
  from: string;
  to: string;
  hours: number;
  firstClosesAt: string;
}

/**
 * [from, to) as whole hours, split where they stop being closed (compactArchive's rule:
 * closesAt, `closedAfterSeconds` after the hour's end). Arithmetic, not a walk over the hours, so
 * a range reaching far into the future costs nothing. A range with no closed hour is left whole:
 * compactArchive refuses it with OpenPartitionError naming the hour, as before.
 */
export function splitOpenHours(
  from: string,
  to: string,
  closedAfterSeconds: number | undefined,
  nowMs: number,
): { closed: { from: number; to: number }; open?: OpenHours } {
  const whole = wholeHours(Date.parse(from), Date.parse(to));
  const closedAfter = closedAfterSeconds ?? DEFAULT_CLOSED_AFTER_SECONDS;
  // The hour starting here is the first not yet closed.
  const firstOpen = floorHour(nowMs - closedAfter * 1000 - HOUR_MS) + HOUR_MS;
  if (firstOpen >= whole.toMs || firstOpen <= whole.fromMs)
    return { closed: { from: whole.fromMs, to: whole.toMs } };
  return {
    closed: { from: whole.fromMs, to: firstOpen },
    open: {
      from: new Date(firstOpen).toISOString(),
      to: new Date(whole.toMs).toISOString(),
      hours: (whole.toMs - firstOpen) / HOUR_MS,
      firstClosesAt: new Date(closesAt(firstOpen, closedAfter)).toISOString(),
    },
  };
}

function eraseCommand(): Command {
  return common(new Command('erase-tenant'))
    .description(
      'Delete every archived row of one tenant in a time range: its own objects whole, other objects rewritten without its rows, every version on a versioned bucket; with --dead-letter-prefix, its S3 dead-letter entries too. Prints a JSON report of what was (with --dry-run: would be) erased.',
    )
    .requiredOption('--tenant <id>', 'the tenant id (as partitionBy / --tenant-key names it)')
    .requiredOption('--from <time>', 'start of the record-time range (inclusive, ISO-8601)', time)
    .requiredOption('--to <time>', 'end of the range (exclusive)', time)
    .option(
      '--dead-letter-prefix <prefix>',
      "also erase the tenant's entries of the S3 dead-letter store under this prefix",
    )
    .option('--dead-letter-bucket <name>', 'the dead-letter store bucket (default the archive bucket)')
    .action(async (flags: EraseFlags) => {
      await printReport(
        flags,
        (client) =>
          eraseTenant({
            ...target(flags, client),
            tenant: flags.tenant,
            from: flags.from,
            to: flags.to,
            ...(flags.deadLetterPrefix === undefined
              ? {}
              : {
                  deadLetter: {
                    prefix: flags.deadLetterPrefix,
                    ...(flags.deadLetterBucket === undefined ? {} : { bucket: flags.deadLetterBucket }),
                  },
                }),
          }),
        {
          found: (report) =>
            report.deleted.length === 0 &&
            report.rewritten.length === 0 &&
            (report.deadLetters?.deleted.length ?? 0) === 0,
          where: `${tableLocation(flags)} for tenant ${flags.tenant} from ${flags.from} to ${flags.to}${flags.deadLetterPrefix === undefined ? '' : ` (and s3://${flags.deadLetterBucket ?? flags.bucket}/${flags.deadLetterPrefix})`}`,
        },
      );
    });
}

export function archiveCommand(): Command {
  const archive = new Command('archive').description(
    'Maintain and read back an S3 archive: compact closed hours into duplicate-free objects, erase one tenant, restore objects from Glacier, replay history through a function.',
  );
  for (const sub of [compactCommand(), eraseCommand(), restoreCommand(), archiveReplayCommand()])
    archive.addCommand(sub.exitOverride().showHelpAfterError());
  return archive;
}
