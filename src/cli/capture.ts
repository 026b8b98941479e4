import { existsSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { DescribeStreamSummaryCommand, KinesisClient } from '@aws-sdk/client-kinesis';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Command, Option } from 'commander';
import type { TidewaterError } from '../core/index.js';
import { resolveIntrinsics } from '../local/config/intrinsics.js';
import { referenceOf } from '../local/config/template-mapping.js';
import { captureKinesis } from '../local/emulator/kinesis-capture.js';
import { capture, type LocalApp, ServerlessConfigError, type TemplatePlan } from '../local/index.js';
import { overlayEnv } from '../local/servers/process-env.js';
import { kinesisArnStream, streamArnTable } from '../records/stream-arn-names.js';
import { type AwsTargetFlags, awsTarget, withAwsTarget } from './aws-target.js';
import { EXIT } from './exit-codes.js';
import { streamFunctionOf } from './function-env.js';
import { cdkOutOption, loadFlaggedApp, templateOption } from './function-handler.js';
import { positive } from './parse.js';
import { describeNamedTable } from './table-lookup.js';

interface CaptureFlags extends AwsTargetFlags {
  streamArn?: string;
  table?: string;
  function?: string;
  config: string;
  template?: string;
  cdkOut?: string;
  stage: string;
  out: string;
  from: 'trim-horizon' | 'latest';
  follow?: boolean;
  emptyPages?: number;
}

export function captureCommand(): Command {
  const command = new Command('capture')
    .description(
      'Write a live DynamoDB stream (AWS, or local via AWS_ENDPOINT_URL_DYNAMODB_STREAMS, as `tidewater start` ' +
        'prints) — or the Kinesis data stream a table streams its changes to (AWS_ENDPOINT_URL_KINESIS) — to a ' +
        'JSONL file that `tidewater replay` reads. Without --stream-arn, --table or --function: the ' +
        "stream of the only stream function of serverless.yml (or of the SAM template, --template, or the CDK app's " +
        'cdk.out, --cdk-out).',
    )
    .option(
      '--stream-arn <arn>',
      'the stream to read: a DynamoDB stream, or a Kinesis stream (arn:aws:kinesis:…)',
    )
    .option(
      '--table <name>',
      "read this table's latest stream (a name, or a logical id in serverless.yml or the template)",
    )
    .option(
      '-f, --function <key>',
      "read the stream this function's stream event reads (a template: the function's logical id)",
    )
    .option('-c, --config <file>', "the service's serverless.yml", 'serverless.yml')
    .addOption(templateOption())
    .addOption(cdkOutOption())
    .option(
      '-s, --stage <stage>',
      'the serverless stage (sls:stage) table names are resolved for; with --cdk-out, also the CDK Stage to read',
      'local',
    )
    .requiredOption('-o, --out <file>', 'JSONL file to write (replaced)')
    .addOption(
      new Option('--from <position>', 'where to start in each shard')
        .choices(['trim-horizon', 'latest'])
        .default('trim-horizon'),
    )
    .option('--follow', 'keep polling until Ctrl-C instead of stopping once caught up')
    .option(
      '--empty-pages <n>',
      'empty GetRecords pages in a row that end a shard (default 1 on a local endpoint, 10 on AWS, which returns empty pages mid-shard)',
      positive,
    );
  withAwsTarget(command).action(async (flags: CaptureFlags) => {
    // A wrong command line, so the usage exit code (command.error), not a failed capture.
    const given = [flags.streamArn, flags.table, flags.function].filter((v) => v !== undefined);
    if (given.length > 1) command.error('error: give one of --stream-arn, --table and --function');
    const template = flags.template !== undefined || flags.cdkOut !== undefined;
    if (given.length === 0 && !template && !existsSync(flags.config))
      command.error(`error: give --stream-arn, --table or --function (there is no ${flags.config} to read)`);
    // --stream-arn needs no app; --table <name> needs none when there is no serverless.yml.
    const app =
      flags.streamArn === undefined && (template || existsSync(flags.config))
        ? await captureApp(flags, template)
        : undefined;
    const source = await streamSource(flags, app);
    // Before any request: capture reads what the shell's (or --local-env's) endpoints point at.
    const services = 'kinesis' in source ? ['KINESIS'] : ['DYNAMODB', 'DYNAMODB_STREAMS'];
    const restoreEnv = overlayEnv(await awsTarget(flags, services));
    try {
      if ('kinesis' in source) await captureKinesisWith(flags, source.kinesis);
      else
        await captureWith(flags, source, app?.error ?? ((m) => new ServerlessConfigError(flags.config, m)));
    } finally {
      restoreEnv();
    }
  });
  return command;
}

/** The app that names the stream; undefined when only a table's name is needed and serverless.yml cannot be read locally. */
async function captureApp(flags: CaptureFlags, template: boolean): Promise<LocalApp | undefined> {
  try {
    // capture runs no function: one whose code or environment cannot run here still names its stream.
    return await loadFlaggedApp(flags, { checkFunctions: false });
  } catch (error) {
    // A serverless.yml that cannot be read locally still leaves `--table <name>` usable as a name.
    if (!template && flags.table !== undefined && error instanceof ServerlessConfigError) return undefined;
    throw error;
  }
}

/** What to read: a DynamoDB stream (its ARN, or its table's name), or a Kinesis stream (ARN or name). */
type CaptureSource = { table?: string; streamArn?: string } | { kinesis: { arn?: string; name?: string } };

async function captureWith(
  flags: CaptureFlags,
  source: { table?: string; streamArn?: string },
  /** An error about the app the table was named in (serverless.yml, or the template). */
  fail: (message: string) => TidewaterError,
): Promise<void> {
  let streamArn = source.streamArn;
  if (!streamArn) {
    const dynamodb = new DynamoDBClient({});
    try {
      const table = await describeNamedTable(
        dynamodb,
        source.table as string,
        flags.table === undefined ? 'table' : '--table',
      );
      streamArn = table.Table?.LatestStreamArn;
    } finally {
      dynamodb.destroy();
    }
    if (!streamArn) throw fail(`table ${source.table} has no stream to capture`);
  }
  const abort = new AbortController();
  const onInterrupt = () => abort.abort();
  process.once('SIGINT', onInterrupt);
  const streams = new DynamoDBStreamsClient({});
  let result: Awaited<ReturnType<typeof capture>>;
  try {
    result = await capture({
      streams,
      streamArn,
      file: flags.out,
      startingPosition: flags.from === 'latest' ? 'LATEST' : 'TRIM_HORIZON',
      stopWhenCaughtUp: !flags.follow,
      ...(flags.emptyPages !== undefined ? { emptyPagesToStop: flags.emptyPages } : {}),
      signal: abort.signal,
    });
  } finally {
    // Ctrl-C ends the process again once the capture is over.
    process.removeListener('SIGINT', onInterrupt);
    streams.destroy();
  }
  process.stdout.write(`${result.records} records from ${streamArn} written to ${result.file}\n`);
  process.exitCode = EXIT.ok;
}

async function captureKinesisWith(
  flags: CaptureFlags,
  stream: { arn?: string; name?: string },
): Promise<void> {
  // HTTP/1.1: GetRecords needs nothing of the client's HTTP/2 default, which kinesalite cannot speak.
  const kinesis = new KinesisClient({ requestHandler: new NodeHttpHandler() });
  const abort = new AbortController();
  const onInterrupt = () => abort.abort();
  process.once('SIGINT', onInterrupt);
  try {
    const streamArn =
      stream.arn ??
      ((await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: stream.name as string })))
        .StreamDescriptionSummary?.StreamARN as string);
    const result = await captureKinesis({
      kinesis,
      streamArn,
      file: flags.out,
      startingPosition: flags.from === 'latest' ? 'LATEST' : 'TRIM_HORIZON',
      stopWhenCaughtUp: !flags.follow,
      signal: abort.signal,
    });
    process.stdout.write(`${result.records} records from ${streamArn} written to ${result.file}\n`);
    process.exitCode = EXIT.ok;
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    kinesis.destroy();
  }
}

/** The table, stream ARN or Kinesis stream that --stream-arn / --table / --function / the app name. */
async function streamSource(flags: CaptureFlags, app: LocalApp | undefined): Promise<CaptureSource> {
  if (flags.streamArn !== undefined)
    return flags.streamArn.includes(':kinesis:')
      ? { kinesis: { arn: flags.streamArn } }
      : { streamArn: flags.streamArn };
  if (flags.table !== undefined)
    return { table: (app && (await tableName(app, flags.table))) ?? flags.table };
  if (!app) throw new ServerlessConfigError(flags.config, 'no such file (needed to find the function)');
  const fn = await streamFunctionOf(app, flags.function);
  const kinesis = fn.stream.source === 'kinesis';
  const source = await functionStreamSource(app, fn.stream.arn, kinesis);
  if (source) return source;
  throw app.error(
    kinesis
      ? `function '${fn.key}': cannot tell which Kinesis stream its arn ${JSON.stringify(fn.stream.arn)} is; pass --stream-arn`
      : `function '${fn.key}': cannot tell which table its stream arn ${JSON.stringify(fn.stream.arn)} is; pass --table or --stream-arn`,
  );
}

/**
 * What a function's stream event reads, in the forms `tidewater start` runs: a GetAtt of the app's
 * table (StreamArn) or Kinesis stream (Arn), a Ref / Sub of a parameter whose value is an ARN, or
 * an ARN written out. An ARN that names a table or stream the app declares means that one, by name
 * (its account, region and label are another deployment's, never the local server's); any other ARN
 * is read as written.
 */
async function functionStreamSource(
  app: LocalApp,
  arn: unknown,
  kinesis: boolean,
): Promise<CaptureSource | undefined> {
  const ref = referenceOf(arn);
  if (ref?.attribute !== undefined) {
    if (kinesis) {
      const name = ref.attribute === 'Arn' ? await kinesisStreamName(app, ref.id) : undefined;
      return name === undefined ? undefined : { kinesis: { name } };
    }
    const table = ref.attribute === 'StreamArn' ? await tableName(app, ref.id) : undefined;
    return table === undefined ? undefined : { table };
  }
  let text = arn;
  if (arn !== null && typeof arn === 'object') {
    const references = await app.plannedReferences();
    try {
      text = resolveIntrinsics(arn, { ...references, where: 'stream arn' });
    } catch {
      // What start could not resolve either: the caller says to pass --stream-arn.
      return undefined;
    }
  }
  if (typeof text !== 'string' || !text.startsWith('arn:')) return undefined;
  const plan = await plannedResources(app);
  if (kinesis) {
    const name = kinesisArnStream(text);
    return name !== undefined && plan?.kinesisStreams.some((stream) => stream.streamName === name)
      ? { kinesis: { name } }
      : { kinesis: { arn: text } };
  }
  const named = streamArnTable(text);
  return named !== undefined && plan?.tables.some((table) => table.createTable.TableName === named)
    ? { table: named }
    : { streamArn: text };
}

/**
 * The app's resources as `tidewater start` plans them for the stage (a template's generated names
 * included); undefined when serverless.yml's cannot be read locally.
 */
async function plannedResources(app: LocalApp): Promise<TemplatePlan | undefined> {
  try {
    return await app.plan();
  } catch (error) {
    // resources: that cannot be read locally still leave `--table <name>` usable as a name.
    if (error instanceof ServerlessConfigError) return undefined;
    throw error;
  }
}

/** A table's logical id in the app → its name for the stage (TableName, else the name start gives it). */
async function tableName(app: LocalApp, logicalId: string): Promise<string | undefined> {
  const plan = await plannedResources(app);
  return plan?.tables.find((table) => table.logicalId === logicalId)?.createTable.TableName;
}

/** A logical id of an AWS::Kinesis::Stream in the app → its name for the stage. */
async function kinesisStreamName(app: LocalApp, logicalId: string): Promise<string | undefined> {
  const plan = await plannedResources(app);
  return plan?.kinesisStreams.find((stream) => stream.logicalId === logicalId)?.streamName;
}
