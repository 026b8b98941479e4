import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { Command, InvalidArgumentError, Option } from 'commander';
import { capture } from '../local/index.js';
import { EXIT } from './exit-codes.js';
import { integer } from './parse.js';

function positiveInteger(text: string): number {
  const value = integer(text);
  if (value < 1) throw new InvalidArgumentError(`expected at least 1, got ${text}`);
  return value;
}

interface CaptureFlags {
  streamArn?: string;
  table?: string;
  out: string;
  from: 'trim-horizon' | 'latest';
  follow?: boolean;
  emptyPages?: number;
}

export function captureCommand(): Command {
  const command = new Command('capture')
    .description(
      'Write a live DynamoDB stream (AWS, or local via AWS_ENDPOINT_URL_DYNAMODB_STREAMS) to a JSONL file that ' +
        '`tidewater replay` reads.',
    )
    .option('--stream-arn <arn>', 'the stream to read')
    .option('--table <name>', "read this table's latest stream")
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
      positiveInteger,
    )
    .action(async (flags: CaptureFlags) => {
      // A wrong command line, so the usage exit code (command.error), not a failed capture.
      if (!flags.streamArn === !flags.table)
        command.error('error: give exactly one of --stream-arn and --table');
      let streamArn = flags.streamArn;
      if (!streamArn) {
        const dynamodb = new DynamoDBClient({});
        const table = await dynamodb.send(new DescribeTableCommand({ TableName: flags.table }));
        dynamodb.destroy();
        streamArn = table.Table?.LatestStreamArn;
        if (!streamArn) throw new Error(`table ${flags.table} has no stream`);
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
    });
  return command;
}
