import { existsSync } from 'node:fs';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { Command, Option } from 'commander';
import { serverlessApp } from '../local/config/local-app.js';
import {
  capture,
  loadServerlessConfig,
  planServiceResources,
  type ServerlessConfig,
  ServerlessConfigError,
} from '../local/index.js';
import { overlayEnv } from '../local/servers/process-env.js';
import { type AwsTargetFlags, awsTarget, withAwsTarget } from './aws-target.js';
import { EXIT } from './exit-codes.js';
import { streamFunctionOf } from './function-env.js';
import { positive } from './parse.js';

interface CaptureFlags extends AwsTargetFlags {
  streamArn?: string;
  table?: string;
  function?: string;
  config: string;
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
        'prints) to a JSONL file that `tidewater replay` reads. Without --stream-arn, --table or --function: the ' +
        "stream of serverless.yml's only stream function.",
    )
    .option('--stream-arn <arn>', 'the stream to read')
    .option('--table <name>', "read this table's latest stream (a name, or a logical id in serverless.yml)")
    .option('-f, --function <key>', "read the stream this serverless.yml function's stream event reads")
    .option('-c, --config <file>', "the service's serverless.yml", 'serverless.yml')
    .option('-s, --stage <stage>', 'the serverless stage (sls:stage) table names are resolved for', 'local')
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
    if (given.length === 0 && !existsSync(flags.config))
      command.error(`error: give --stream-arn, --table or --function (there is no ${flags.config} to read)`);
    // Before any request: capture reads what the shell's (or --local-env's) endpoints point at.
    const restoreEnv = overlayEnv(await awsTarget(command, flags, ['DYNAMODB', 'DYNAMODB_STREAMS']));
    try {
      await captureWith(flags);
    } finally {
      restoreEnv();
    }
  });
  return command;
}

async function captureWith(flags: CaptureFlags): Promise<void> {
  let streamArn = flags.streamArn;
  if (!streamArn) {
    const source = await streamSource(flags);
    streamArn = source.streamArn;
    if (!streamArn) {
      const dynamodb = new DynamoDBClient({});
      try {
        const table = await dynamodb.send(new DescribeTableCommand({ TableName: source.table }));
        streamArn = table.Table?.LatestStreamArn;
      } finally {
        dynamodb.destroy();
      }
      if (!streamArn)
        throw new ServerlessConfigError(flags.config, `table ${source.table} has no stream to capture`);
    }
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

/** The table (or a stream ARN written out) that --table / --function / serverless.yml name. */
async function streamSource(flags: CaptureFlags): Promise<{ table?: string; streamArn?: string }> {
  const config = existsSync(flags.config)
    ? await loadServerlessConfig({ file: flags.config, stage: flags.stage })
    : undefined;
  if (flags.table !== undefined)
    return { table: (config && (await tableName(config, flags.table))) ?? flags.table };
  if (!config) throw new ServerlessConfigError(flags.config, 'no such file (needed to find the function)');
  const fn = await streamFunctionOf(await serverlessApp(config), flags.function);
  const arn = fn.stream.arn;
  if (typeof arn === 'string') return { streamArn: arn };
  const getAtt = (arn as { 'Fn::GetAtt'?: unknown } | null)?.['Fn::GetAtt'];
  const [id, attribute] =
    typeof getAtt === 'string' ? getAtt.split('.') : Array.isArray(getAtt) ? getAtt : [];
  const table = attribute === 'StreamArn' ? await tableName(config, String(id)) : undefined;
  if (!table)
    throw new ServerlessConfigError(
      config.file,
      `function '${fn.key}': cannot tell which table its stream arn ${JSON.stringify(arn)} is; pass --table or --stream-arn`,
    );
  return { table };
}

/** A logical id under serverless.yml's resources: → the table's name for the stage. */
async function tableName(config: ServerlessConfig, logicalId: string): Promise<string | undefined> {
  let plan: Awaited<ReturnType<typeof planServiceResources>>;
  try {
    plan = await planServiceResources(config);
  } catch (error) {
    // resources: that cannot be read locally still leave `--table <name>` usable as a name.
    if (error instanceof ServerlessConfigError) return undefined;
    throw error;
  }
  return plan.tables.find((table) => table.logicalId === logicalId)?.createTable.TableName;
}
