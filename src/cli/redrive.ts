import { Command } from 'commander';
import { defineEnvironment } from '../core/options.js';
import { DEFAULT_DEAD_LETTER_OVERFLOW_PREFIX } from '../handlers/archive-settings.js';
import { HandlerConfigError } from '../handlers/config-error.js';
import { KEY_PREFIX_OPTION } from '../handlers/key-prefix.js';
import type { StreamFunctionSettings } from '../local/index.js';
import { overlayEnv } from '../local/servers/process-env.js';
import {
  formatProgress,
  formatReport,
  handlerTarget,
  lambdaTarget,
  type RedriveReport,
  type RedriveTarget,
  redrive,
} from '../redrive/index.js';
import { type AwsTargetFlags, awsTarget, withAwsTarget } from './aws-target.js';
import { EXIT } from './exit-codes.js';
import { type FunctionFlags, functionOptions, withFunctionHandler } from './function-handler.js';
import { positive } from './parse.js';

interface RedriveFlags extends FunctionFlags, AwsTargetFlags {
  streamArn: string;
  queueUrl?: string;
  bucket?: string;
  prefix?: string;
  invoke?: string;
  dryRun?: boolean;
  pointerBucket?: string;
  pointerPrefix?: string;
  maxMessages?: number;
  maxSeconds?: number;
}

export function redriveCommand(): Command {
  const command = functionOptions(new Command('redrive'))
    .description(
      "Run a stream's failed batches again: Lambda's on-failure records (an SQS queue, SNS delivered to SQS, or " +
        "an S3 destination) are read back from the stream (DynamoDB or Kinesis), tidewater's dead-letter entries carry their records; " +
        'each message is removed only after all its records succeeded. Local endpoints (--local-env, AWS_ENDPOINT_URL_*) or --aws.',
    )
    .requiredOption(
      '--stream-arn <arn>',
      "the stream whose failed batches to redrive: the table's DynamoDB stream, or the Kinesis stream its changes go to (others are refused)",
    )
    .option('--queue-url <url>', 'SQS queue holding on-failure records or SqsDeadLetterSink entries')
    .option('--bucket <name>', 'S3 bucket holding on-failure objects or S3DeadLetterSink entries')
    .option('--prefix <prefix>', 'key prefix in --bucket (e.g. aws/lambda/<mapping UUID>/ or dead-letter/)')
    .option(
      '--invoke <function>',
      'invoke the deployed function (name or ARN) through the Lambda API instead',
    )
    .option(
      '--pointer-bucket <name>',
      "SqsDeadLetterSink's overflow bucket: the only bucket a dead-letter pointer may lead to (default, through a function's handler: its ARCHIVE_BUCKET when it sets DEAD_LETTER_QUEUE_URL; otherwise pointers are refused)",
    )
    .option(
      '--pointer-prefix <prefix>',
      'key prefix a pointer must lead under in --pointer-bucket (e.g. dead-letter/; default with the bucket above: its DEAD_LETTER_OVERFLOW_PREFIX)',
    )
    .option('--max-messages <n>', 'read at most this many messages and objects (default 1000)', positive)
    .option('--max-seconds <n>', 'read no further message after this many seconds (default 240)', positive)
    .option('--dry-run', 'print what would be redriven; invoke and remove nothing')
    .option('-v, --verbose', 'print the environment set for the handler');
  withAwsTarget(command).action(async (flags: RedriveFlags) => {
    if (flags.queueUrl === undefined && flags.bucket === undefined)
      command.error('error: give --queue-url, --bucket, or both', { exitCode: EXIT.usage });
    const target = await awsTarget(flags, redriveServices(flags));
    if (flags.invoke !== undefined) {
      const restore = overlayEnv(target);
      try {
        finish(await run(flags, lambdaTarget({ functionName: flags.invoke })));
      } finally {
        restore();
      }
      return;
    }
    await withFunctionHandler(
      flags,
      async (fn, handler) => {
        finish(await run(configuredPointers(flags, fn), handlerTarget(handler, { functionName: fn.key })));
      },
      target,
    );
  });
  return command;
}

/**
 * The services a redrive sends requests to: the stream it reads back, where the failed batches
 * are, and what runs them (the deployed function, or a handler whose clients reach DynamoDB and
 * S3, as `replay`'s do).
 */
function redriveServices(flags: RedriveFlags): string[] {
  return [
    flags.streamArn.includes(':kinesis:') ? 'KINESIS' : 'DYNAMODB_STREAMS',
    ...(flags.queueUrl === undefined ? [] : ['SQS']),
    ...(flags.bucket === undefined ? [] : ['S3']),
    ...(flags.invoke === undefined ? ['DYNAMODB', 'S3'] : ['LAMBDA']),
  ].filter((service, i, all) => all.indexOf(service) === i);
}

/**
 * The two variables of archiveTtl's that say where its dead-letter overflow goes, read by the same
 * rules as the handler reads them (archive-ttl.ts; that module builds its handler at import, so it
 * is not imported here).
 */
const readOverflow = /* @__PURE__ */ defineEnvironment<{
  ARCHIVE_BUCKET: string;
  DEAD_LETTER_OVERFLOW_PREFIX?: string;
}>({ error: (message, variable) => new HandlerConfigError(variable ?? '', message) })('redrive', {
  ARCHIVE_BUCKET: { kind: 'nonEmptyString', required: true },
  DEAD_LETTER_OVERFLOW_PREFIX: { ...KEY_PREFIX_OPTION, default: DEFAULT_DEAD_LETTER_OVERFLOW_PREFIX },
});

/**
 * The flags with the pointer bucket and prefix taken from the function's own dead-letter sink when
 * neither flag is given: a function configured as archiveTtl is (DEAD_LETTER_QUEUE_URL, its
 * overflow under DEAD_LETTER_OVERFLOW_PREFIX in ARCHIVE_BUCKET; serverless.yml and TtlArchive set
 * them) overflows large entries there, so that is the one place its pointers may lead. Read from
 * the environment the handler runs with (set by withFunctionHandler), by the handler's rules, so
 * redrive follows pointers exactly where the handler writes them. Any other function leaves
 * pointers refused unless the flags say where.
 */
function configuredPointers(flags: RedriveFlags, fn: StreamFunctionSettings): RedriveFlags {
  if (flags.pointerBucket !== undefined || flags.pointerPrefix !== undefined) return flags;
  if (!Object.hasOwn(fn.environment, 'DEAD_LETTER_QUEUE_URL')) return flags;
  try {
    const overflow = readOverflow(process.env);
    process.stderr.write(
      `redrive: dead-letter pointers followed into ${fn.key}'s ARCHIVE_BUCKET under its DEAD_LETTER_OVERFLOW_PREFIX\n`,
    );
    return {
      ...flags,
      pointerBucket: overflow.ARCHIVE_BUCKET,
      pointerPrefix: overflow.DEAD_LETTER_OVERFLOW_PREFIX,
    };
  } catch (error) {
    if (!(error instanceof HandlerConfigError)) throw error;
    // The variable's name only: its value is the deployment's, not for a log line.
    process.stderr.write(
      `warning: ${fn.key}'s dead-letter overflow cannot be read (${error.variable}); pointers are refused unless --pointer-bucket is given\n`,
    );
    return flags;
  }
}

function run(flags: RedriveFlags, target: RedriveTarget): Promise<RedriveReport> {
  return redrive({
    streamArn: flags.streamArn,
    target,
    ...(flags.queueUrl === undefined ? {} : { queueUrl: flags.queueUrl }),
    ...(flags.bucket === undefined ? {} : { bucket: flags.bucket }),
    ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }),
    ...(flags.pointerBucket === undefined ? {} : { pointerBucket: flags.pointerBucket }),
    ...(flags.pointerPrefix === undefined ? {} : { pointerPrefix: flags.pointerPrefix }),
    ...(flags.maxMessages === undefined ? {} : { maxMessages: flags.maxMessages }),
    ...(flags.maxSeconds === undefined ? {} : { maxSeconds: flags.maxSeconds }),
    dryRun: flags.dryRun === true,
    onProgress: (progress) => process.stderr.write(`${formatProgress(progress)}\n`),
  });
}

function finish(report: RedriveReport): void {
  for (const line of formatReport(report)) process.stdout.write(`${line}\n`);
  // An empty queue or a mistyped prefix reports success otherwise: say so, with its own code.
  if (report.messagesRead === 0) {
    process.stderr.write('nothing to redrive: no message in the queue, no object under the prefix\n');
    process.exitCode = EXIT.nothingFound;
    return;
  }
  const complete =
    report.failures.length + report.rangesExpired.length + report.errors.length + report.kept.length === 0 &&
    report.stopped === undefined;
  process.exitCode = complete ? EXIT.ok : EXIT.incomplete;
}
