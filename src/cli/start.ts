import { Command } from 'commander';
import { formatSummary, runMainJob } from '../local/main-job.js';
import { EXIT } from './exit-codes.js';
import { integer } from './parse.js';

export function startCommand(): Command {
  return new Command('start')
    .description(
      'Run the main job locally: DynamoDB Local, an S3 and an SQS server, the resources from infra/, a workload ' +
        "(expired, live, broken-TTL and user-deleted items, votes), the serverless.yml handlers through Lambda's " +
        'event-source-mapping rules, and a summary to check.',
    )
    .option('--expired <n>', 'items whose TTL has passed', integer, 24)
    .option('--user-deletes <n>', 'items deleted by the user', integer, 5)
    .option('--votes <n>', 'votes to cast', integer, 600)
    .option('--timeout <seconds>', 'how long to wait for the archive', integer, 90)
    .option('--json', 'print the summary as JSON')
    .action(async (opts: { expired: number; userDeletes: number; votes: number; timeout: number; json?: boolean }) => {
      const summary = await runMainJob({
        expiredItems: opts.expired,
        userDeletes: opts.userDeletes,
        votes: opts.votes,
        timeoutMs: opts.timeout * 1000,
        log: opts.json ? undefined : (line) => process.stderr.write(`» ${line}\n`),
      });
      process.stdout.write(opts.json ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary));
      process.exitCode = summary.ok ? EXIT.ok : EXIT.checkFailed;
    });
}
