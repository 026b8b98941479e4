import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Command } from 'commander';
import { overlayEnv } from '../local/servers/process-env.js';
import { AggregationIncompleteError, aggregateVotes, VoteCounter } from '../votes/index.js';
import { type AwsTargetFlags, awsTarget, withAwsTarget } from './aws-target.js';
import { EXIT } from './exit-codes.js';
import { integer } from './parse.js';

interface AggregateFlags extends AwsTargetFlags {
  table: string;
  poll: string;
  shards?: number;
  concurrency?: number;
  totals?: boolean;
}

export function aggregateCommand(): Command {
  const command = new Command('aggregate')
    .description("Run the vote aggregator once: fold every contestant's shard counters into its total item.")
    .requiredOption('-t, --table <name>', 'the table holding the vote items')
    .option('-p, --poll <id>', 'the poll to aggregate', 'default')
    .option('--shards <n>', 'shard items per contestant (as the writers use)', integer)
    .option('--concurrency <n>', 'requests in flight at once', integer)
    .option('--totals', 'print the leaderboard afterwards');
  return withAwsTarget(command).action(async (flags: AggregateFlags) => {
    const restoreEnv = overlayEnv(await awsTarget(flags, ['DYNAMODB']));
    const dynamodb = new DynamoDBClient({});
    try {
      const poll = {
        tableName: flags.table,
        poll: flags.poll,
        dynamodb,
        ...(flags.shards !== undefined ? { shards: flags.shards } : {}),
      };
      const summary = await aggregateVotes({
        ...poll,
        ...(flags.concurrency !== undefined ? { concurrency: flags.concurrency } : {}),
      });
      process.stdout.write(
        `${JSON.stringify(summary, (_, v) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`,
      );
      if (flags.totals) {
        for (const row of await new VoteCounter(poll).getTotals({ consistentRead: true })) {
          process.stdout.write(`${row.contestant}\t${row.total}\n`);
        }
      }
      process.exitCode = EXIT.ok;
    } catch (error) {
      if (error instanceof AggregationIncompleteError) {
        process.stderr.write(`${error.message}\n`);
        process.exitCode = EXIT.incomplete;
        return;
      }
      throw error;
    } finally {
      dynamodb.destroy();
      restoreEnv();
    }
  });
}
