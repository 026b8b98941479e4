import { Command } from 'commander';
import { type DemoSummary, formatDemoSummary, runDemo } from './demo-app.js';
import { EXIT } from './exit-codes.js';
import { integer } from './parse.js';

/**
 * tidewater's own demo service (what `npm start` runs in the repository): this package's
 * serverless.yml, infra/ and handlers, so it runs the same from an installed package.
 */
export function demoCommand(): Command {
  return new Command('demo')
    .description(
      "Run tidewater's own demo service (this package's serverless.yml, infra/ and handlers; not your service: " +
        'for that, `tidewater start`) locally: DynamoDB Local, an S3 and an SQS server, the resources from infra/, ' +
        "a workload (expired, live, broken-TTL and user-deleted items, votes), the archive and vote handlers through Lambda's " +
        'event-source-mapping rules, and a summary to check (exit code 3 when a check fails).',
    )
    .option('--expired <n>', 'items whose TTL has passed', integer, 12)
    .option('--user-deletes <n>', 'items deleted by the user', integer, 5)
    .option('--votes <n>', 'votes to cast', integer, 400)
    .option('--timeout <seconds>', 'how long to wait for the archive', integer, 90)
    .option('--json', 'print the summary as JSON')
    .option('-v, --verbose', "show the functions' own output (logs, EMF metric lines)")
    .action(
      async (opts: {
        expired: number;
        userDeletes: number;
        votes: number;
        timeout: number;
        json?: boolean;
        verbose?: boolean;
      }) => {
        // The emulated functions write their logs and EMF lines to stdout, as in Lambda; keep
        // stdout for the summary and show their output on stderr only when asked.
        const write = process.stdout.write.bind(process.stdout);
        process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) =>
          opts.verbose ? process.stderr.write(chunk, ...(rest as [])) : true) as typeof process.stdout.write;
        let summary: DemoSummary;
        try {
          summary = await runDemo({
            expiredItems: opts.expired,
            userDeletes: opts.userDeletes,
            votes: opts.votes,
            timeoutMs: opts.timeout * 1000,
            ...(opts.json ? {} : { log: (line: string) => process.stderr.write(`» ${line}\n`) }),
          });
        } finally {
          process.stdout.write = write;
        }
        process.stdout.write(
          opts.json ? `${JSON.stringify(summary, null, 2)}\n` : formatDemoSummary(summary),
        );
        process.exitCode = summary.ok ? EXIT.ok : EXIT.checkFailed;
      },
    );
}
