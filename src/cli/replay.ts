import { Presets, SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError } from 'commander';
import { writeFileAtomic } from '../core/write-file-atomic.js';
import {
  DEFAULT_STALL_AFTER_ATTEMPTS,
  type EmulatorEvent,
  type KinesisStreamHandler,
  MemoryFailureDestination,
  replay,
  replayKinesis,
  type StreamFunctionSettings,
  type StreamHandler,
  toEmulatorOptions,
} from '../local/index.js';
import { type AwsTargetFlags, awsTarget, withAwsTarget } from './aws-target.js';
import { describeEvent } from './describe-event.js';
import { EXIT } from './exit-codes.js';
import { type FunctionFlags, functionOptions, withFunctionHandler } from './function-handler.js';

interface ReplayFlags extends AwsTargetFlags, FunctionFlags {
  onFailureOut?: string;
  verbose?: boolean;
  progress: boolean;
  stallAfter?: number;
}

export function replayCommand(): Command {
  const command: Command = functionOptions(new Command('replay'))
    .description(
      "Replay JSONL files (Lambda events, or records from `tidewater capture`) through a function's handler with " +
        "Lambda's event-source-mapping rules, as serverless.yml configures them (for a `stream: type: kinesis` " +
        "function: Lambda Kinesis events or records, with the Kinesis mapping rules). The mapping's decisions are " +
        "deterministic (its clock is the data's); the handler's own age checks use the wall clock.",
    )
    .argument('<files...>', 'JSONL files')
    .option('--on-failure-out <file>', 'write on-failure invocation records here (JSONL)')
    .option(
      '--stall-after <attempts>',
      'with unbounded retries, end with ReplayStalledError after this many failed attempts in a row without ' +
        'progress (default 10; Infinity retries without end)',
      stallAttempts,
    )
    .option('-v, --verbose', 'print every decision (invoke, response, retry, bisect, checkpoint)')
    .option('--no-progress', 'no progress bar');
  return withAwsTarget(command).action(async (files: string[], flags: ReplayFlags) => {
    // Before anything else: the handler's SDK clients go where these variables say.
    const target = await awsTarget(flags, ['DYNAMODB', 'S3']);
    await withFunctionHandler(flags, (fn, handler) => replayWith(files, flags, fn, handler), target);
  });
}

async function replayWith(
  files: string[],
  flags: ReplayFlags,
  fn: StreamFunctionSettings,
  handler: StreamHandler,
): Promise<void> {
  const mapping = toEmulatorOptions(fn);
  if (unbounded(mapping.maximumRetryAttempts)) {
    // Lambda retries such a batch until its records are too old or leave the stream (24 h). The
    // replay's clock is the data's and does not advance while retrying, so neither moment comes.
    process.stderr.write(
      `warning: ${fn.key} has no maximumRetryAttempts (Lambda's default: retry until the record is ` +
        "older than maximumRecordAgeInSeconds or expires from the stream after 24 h; a replay's clock does " +
        'not move while it retries). A record that always fails ends the replay with ReplayStalledError after ' +
        `${flags.stallAfter ?? DEFAULT_STALL_AFTER_ATTEMPTS} failed attempts without progress (--stall-after); set ` +
        'maximumRetryAttempts on the stream event to bound it.\n',
    );
  }
  const onFailure = new MemoryFailureDestination();
  const bar =
    flags.progress && process.stderr.isTTY
      ? new SingleBar({ clearOnComplete: true }, Presets.shades_classic)
      : undefined;
  let started = false;
  const settings = {
    ...mapping,
    onFailure,
    keepLog: false,
    onEvent: flags.verbose
      ? (event: EmulatorEvent) => process.stderr.write(`${describeEvent(event)}\n`)
      : undefined,
    ...(flags.stallAfter === undefined ? {} : { stallAfterAttempts: flags.stallAfter }),
  };
  // --verbose prints every event already; otherwise failures, repeats collapsed into one line.
  const log = flags.verbose ? {} : { log: (line: string) => process.stderr.write(`${line}\n`) };
  const result =
    fn.stream.source === 'kinesis'
      ? await replayKinesis({
          files,
          // createStreamHandler's handler takes either kind of event; EVENT_SOURCE picks one.
          mapping: { ...settings, handler: handler as unknown as KinesisStreamHandler },
          ...log,
        })
      : await replay({
          files,
          mapping: { ...settings, handler },
          ...log,
          onProgress: ({ handled, total }) => {
            if (!bar) return;
            if (!started) bar.start(total, 0);
            started = true;
            bar.update(handled);
          },
        });
  bar?.stop();
  if (flags.onFailureOut) {
    await writeFileAtomic(
      flags.onFailureOut,
      onFailure.records.map((r) => `${JSON.stringify(r)}\n`).join(''),
    );
  }
  for (const shard of result.shards) {
    process.stdout.write(
      `${shard.shardId}: ${shard.records} records, ${shard.invocations} invocations, ${shard.filtered} filtered out, ` +
        `${shard.discarded} discarded, checkpoint ${shard.checkpoint ?? '-'}\n`,
    );
  }
  process.stdout.write(
    `${result.records} records replayed; ${onFailure.records.length} on-failure records\n`,
  );
  process.exitCode = onFailure.records.length > 0 ? EXIT.recordsDiscarded : EXIT.ok;
}

function stallAttempts(value: string): number {
  if (value === 'Infinity') return Number.POSITIVE_INFINITY;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError('a whole number of attempts from 1, or Infinity');
  return n;
}

/** Unset or -1: Lambda's "until the record expires". */
function unbounded(limit: number | undefined): boolean {
  return limit === undefined || limit < 0;
}
