import { Command, InvalidArgumentError } from 'commander';
import { EXIT } from './exit-codes.js';
import { cdkOutOption, templateOption } from './function-handler.js';
import { runLocalService } from './local-service.js';
import { positive } from './parse.js';

interface StartFlags {
  config: string;
  template?: string;
  cdkOut?: string;
  stage: string;
  function?: string[];
  once?: boolean;
  for?: number;
  dynamodbEndpoint?: string;
  s3Endpoint?: string;
  sqsEndpoint?: string;
  writeEnv?: string;
  showEnvValues?: boolean;
  verbose?: boolean;
}

function url(text: string): string {
  if (!/^https?:\/\/[^/]+/.test(text)) throw new InvalidArgumentError(`expected an http(s) URL, got ${text}`);
  return text;
}

export function startCommand(): Command {
  const command = new Command('start')
    .description(
      "Run your service locally from its serverless.yml (or a SAM template, --template, or a CDK app's cdk.out, " +
        '--cdk-out): DynamoDB Local, an S3 and an SQS server; the tables, buckets and queues it declares; and ' +
        "every function with a DynamoDB stream event (a template's stream mapping) fed by that table's " +
        "stream (a `stream: type: kinesis` event: by the table's Kinesis streaming destination on a local Kinesis " +
        "server) with Lambda's event-source-mapping rules and the event's settings, its handler (TypeScript " +
        'compiled with your esbuild) running with provider.environment and its own environment. Prints the ' +
        'endpoints to point your scripts at, and runs until Ctrl-C (or --once / --for).',
    )
    .option('-c, --config <file>', "the service's serverless.yml", 'serverless.yml')
    .addOption(templateOption())
    .addOption(cdkOutOption())
    .option(
      '-s, --stage <stage>',
      'the serverless stage (sls:stage); with --cdk-out, also the CDK Stage to read',
      'local',
    )
    .option(
      '-f, --function <key>',
      'run only this function (repeat for several); default every stream function',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--once', 'deliver what the streams hold, then stop (for scripts and tests)')
    .option('--for <seconds>', 'stop after this many seconds', positive)
    .option(
      '--dynamodb-endpoint <url>',
      'use this DynamoDB (Local) instead of starting one (no Java needed)',
      url,
    )
    .option('--s3-endpoint <url>', 'use this S3 server instead of starting one', url)
    .option('--sqs-endpoint <url>', 'use this SQS server instead of starting one', url)
    // Not --env-file: Node itself reads that flag anywhere on its command line.
    .option(
      '--write-env <file>',
      'write the local endpoints and credentials here (KEY=value lines) once ready',
    )
    .option(
      '--show-env-values',
      "print each function's environment values (default: only the names, and whether each is set)",
    )
    .option('-v, --verbose', 'print every event-source-mapping decision (invoke, response, retry, bisect…)')
    .action(async (flags: StartFlags) => {
      if (flags.once && flags.for !== undefined) command.error('error: give --once or --for, not both');
      const stop = new AbortController();
      const onSignal = (signal: NodeJS.Signals) => {
        if (stop.signal.aborted) {
          // A second Ctrl-C while shutting down: the user wants out now.
          process.stderr.write(`tidewater: ${signal} again, exiting without a clean shutdown\n`);
          process.exit(EXIT.error);
        }
        process.stderr.write(`tidewater: ${signal}, stopping\n`);
        stop.abort();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        const result = await runLocalService({
          ...(flags.template !== undefined
            ? { template: flags.template }
            : flags.cdkOut !== undefined
              ? { cdkOut: flags.cdkOut }
              : { config: flags.config }),
          stage: flags.stage,
          ...(flags.function ? { functions: flags.function } : {}),
          ...(flags.once ? { once: true } : {}),
          ...(flags.for !== undefined ? { forSeconds: flags.for } : {}),
          signal: stop.signal,
          endpoints: {
            ...(flags.dynamodbEndpoint ? { dynamodb: flags.dynamodbEndpoint } : {}),
            ...(flags.s3Endpoint ? { s3: flags.s3Endpoint } : {}),
            ...(flags.sqsEndpoint ? { sqs: flags.sqsEndpoint } : {}),
          },
          ...(flags.writeEnv ? { envFile: flags.writeEnv } : {}),
          ...(flags.showEnvValues ? { showEnvValues: true } : {}),
          ...(flags.verbose ? { verbose: true } : {}),
          log: (line) => process.stderr.write(`tidewater: ${line}\n`),
        });
        process.exitCode = result.discarded > 0 ? EXIT.recordsDiscarded : EXIT.ok;
      } finally {
        process.removeListener('SIGINT', onSignal);
        process.removeListener('SIGTERM', onSignal);
      }
    });
  return command;
}
