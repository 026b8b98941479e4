/**
 * Vote aggregation cycle: tidewater's aggregateVotes (BatchGetItem of all shard + total keys, a
 * conditional write only for changed totals) against the per-shard approach of the public
 * building-blocks sample (one Query per shard item, every total rewritten), both on the same
 * seeded data in DynamoDB Local. Requests are counted at the client as they leave it.
 */
import {
  BatchWriteItemCommand,
  DynamoDBClient,
  QueryCommand,
  UpdateItemCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import pLimit from 'p-limit';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  startDynamoDbLocal,
} from '../../src/local/servers/dynamodb-local.js';
import { aggregateVotes } from '../../src/votes/aggregate.js';
import { VoteCounter } from '../../src/votes/counter.js';
import { PollKeys } from '../../src/votes/keys.js';
import { fixed, goal, int, table } from '../lib/markdown.js';
import { median, nowMs } from '../lib/stats.js';
import type { Suite, SuiteContext } from '../lib/suite.js';
import { createVotesTable } from '../lib/votes-table.js';

const TABLE = 'votes-bench';
const REGISTRY_PARTITIONS = 4;
const CONCURRENCY = 8;
/** Share of contestants that receive votes between two steady-state cycles. */
const CHANGED_SHARE = 0.05;

interface CycleResult {
  ms: number;
  requests: Record<string, number>;
  totalsWritten: number;
}

function countingClient(endpoint: string) {
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const counts = new Map<string, number>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = (context.commandName ?? 'unknown').replace(/Command$/, '');
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
  return { client, counts };
}

/** Deterministic shard values so both polls hold the same data. */
function seedValue(contestant: number, shard: number): number {
  return ((contestant * 7919 + shard * 104_729) % 997) + 1;
}

async function seedPoll(client: DynamoDBClient, poll: string, contestants: string[], shards: number) {
  const counter = new VoteCounter({
    tableName: TABLE,
    poll,
    shards,
    registryPartitions: REGISTRY_PARTITIONS,
    dynamodb: client,
  });
  await counter.registry.register(contestants);
  const keys = new PollKeys(poll, REGISTRY_PARTITIONS);
  const puts: WriteRequest[] = [];
  contestants.forEach((contestant, c) => {
    for (let k = 0; k < shards; k++) {
      puts.push({
        PutRequest: { Item: { ...keys.shard(contestant, k), votes: { N: String(seedValue(c, k)) } } },
      });
    }
  });
  const limit = pLimit(CONCURRENCY);
  const chunks: WriteRequest[][] = [];
  for (let i = 0; i < puts.length; i += 25) chunks.push(puts.slice(i, i + 25));
  await Promise.all(
    chunks.map((chunk) =>
      limit(async () => {
        let pending = chunk;
        while (pending.length > 0) {
          const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: pending } }));
          pending = out.UnprocessedItems?.[TABLE] ?? [];
        }
      }),
    ),
  );
  return counter;
}

/**
 * The per-shard peer: for each registered contestant, one strongly consistent Query per shard
 * partition key, sum, then SET the total unconditionally (the sample rewrites every total).
 */
async function perShardCycle(client: DynamoDBClient, poll: string, contestants: string[], shards: number) {
  const keys = new PollKeys(poll, REGISTRY_PARTITIONS);
  const limit = pLimit(CONCURRENCY);
  const sums = new Map<string, bigint>();
  await Promise.all(
    contestants.flatMap((contestant) =>
      Array.from({ length: shards }, (_, k) =>
        limit(async () => {
          const out = await client.send(
            new QueryCommand({
              TableName: TABLE,
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': keys.shard(contestant, k).pk },
              ConsistentRead: true,
            }),
          );
          const value = BigInt(out.Items?.[0]?.votes?.N ?? '0');
          sums.set(contestant, (sums.get(contestant) ?? 0n) + value);
        }),
      ),
    ),
  );
  await Promise.all(
    contestants.map((contestant) =>
      limit(() =>
        client.send(
          new UpdateItemCommand({
            TableName: TABLE,
            Key: keys.total(contestant),
            UpdateExpression: 'SET #t = :t, contestant = :c',
            ExpressionAttributeNames: { '#t': 'total' },
            ExpressionAttributeValues: {
              ':t': { N: String(sums.get(contestant) ?? 0n) },
              ':c': { S: contestant },
            },
          }),
        ),
      ),
    ),
  );
  return contestants.length;
}

async function timed(counts: Map<string, number>, run: () => Promise<number>): Promise<CycleResult> {
  counts.clear();
  const started = nowMs();
  const totalsWritten = await run();
  const ms = nowMs() - started;
  return { ms, requests: Object.fromEntries(counts), totalsWritten };
}

const totalRequests = (r: CycleResult) => Object.values(r.requests).reduce((a, b) => a + b, 0);

const suite: Suite = {
  name: 'aggregator',
  title: 'Vote aggregation cycle',
  async run({ quick, log }: SuiteContext) {
    const C = quick ? 50 : 1_000;
    const S = 20;
    const steadyRounds = 2;
    const server = await startDynamoDbLocal();
    try {
      const setup = new DynamoDBClient({
        endpoint: server.endpoint,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      });
      await createVotesTable(setup, TABLE);
      const contestants = Array.from({ length: C }, (_, i) => `contestant-${i}`);
      log(`seeding 2 polls × ${C} contestants × ${S} shards`);
      const twCounter = await seedPoll(setup, 'tw', contestants, S);
      const peerCounter = await seedPoll(setup, 'peer', contestants, S);

      const tw = countingClient(server.endpoint);
      const peer = countingClient(server.endpoint);
      const runTw = () =>
        timed(tw.counts, async () => {
          const summary = await aggregateVotes({
            tableName: TABLE,
            poll: 'tw',
            shards: S,
            registryPartitions: REGISTRY_PARTITIONS,
            concurrency: CONCURRENCY,
            dynamodb: tw.client,
          });
          if (summary.failedContestants > 0) throw new Error('tidewater cycle failed contestants');
          return summary.totalsWritten;
        });
      // The peer lists the registry through its own counted client too.
      const peerReader = new VoteCounter({
        tableName: TABLE,
        poll: 'peer',
        shards: S,
        registryPartitions: REGISTRY_PARTITIONS,
        dynamodb: peer.client,
      });
      const runPeer = () =>
        timed(peer.counts, async () => {
          const listed = await peerReader.registry.list();
          return perShardCycle(peer.client, 'peer', listed, S);
        });

      // Warm DynamoDB Local's JIT on every request path both approaches use, on a poll of its own,
      // so the first measured cycle is not the JVM's first Query / BatchGetItem / conditional SET.
      const warm = contestants.slice(0, Math.min(50, C));
      await seedPoll(setup, 'warm', warm, S);
      const warmClient = countingClient(server.endpoint).client;
      await aggregateVotes({
        tableName: TABLE,
        poll: 'warm',
        shards: S,
        registryPartitions: REGISTRY_PARTITIONS,
        dynamodb: warmClient,
      });
      await perShardCycle(warmClient, 'warm', warm, S);

      log('first cycle (every total new)');
      const firstTw = await runTw();
      const firstPeer = await runPeer();

      const steadyTw: CycleResult[] = [];
      const steadyPeer: CycleResult[] = [];
      const changedPerRound = Math.max(1, Math.round(C * CHANGED_SHARE));
      for (let round = 0; round < steadyRounds; round++) {
        for (let i = 0; i < changedPerRound; i++) {
          const contestant = contestants[(round * 37 + i * 13) % C]!;
          await twCounter.castVote(contestant, 3);
          await peerCounter.castVote(contestant, 3);
        }
        log(`steady cycle ${round + 1}/${steadyRounds} (${changedPerRound} totals changed)`);
        // Alternate who goes first so neither always runs on a warmer server.
        if (round % 2 === 0) {
          steadyTw.push(await runTw());
          steadyPeer.push(await runPeer());
        } else {
          steadyPeer.push(await runPeer());
          steadyTw.push(await runTw());
        }
      }

      // Both must have computed the same totals, or the comparison means nothing.
      const [a, b] = await Promise.all([
        twCounter.getTotals({ consistentRead: true }),
        peerCounter.getTotals({ consistentRead: true }),
      ]);
      const same =
        a.length === b.length &&
        a.every((t, i) => t.contestant === b[i]?.contestant && t.total === b[i]?.total);
      if (!same) throw new Error('tidewater and the per-shard peer disagree on the totals');

      const goalBatchGets = Math.ceil((C * (S + 1)) / 100);
      const lastTw = steadyTw.at(-1)!;
      const rows = [
        ['tidewater aggregateVotes', 'first', firstTw],
        ['per-shard Query (sample)', 'first', firstPeer],
        ['tidewater aggregateVotes', `steady (${changedPerRound} changed)`, lastTw],
        ['per-shard Query (sample)', `steady (${changedPerRound} changed)`, steadyPeer.at(-1)!],
      ] as const;
      const markdown = [
        `${int(C)} contestants × ${S} shards, DynamoDB Local, ${CONCURRENCY} requests in flight. ` +
          `"steady" = ${fixed(CHANGED_SHARE * 100, 0)}% of contestants got votes since the last cycle; ` +
          `wall time is the median of ${steadyRounds} steady cycles. Both approaches end with identical totals.`,
        '',
        table(
          ['approach', 'cycle', 'BatchGetItem', 'Query', 'UpdateItem', 'requests', 'wall time'],
          rows.map(([name, cycle, r]) => [
            name,
            cycle,
            int(r.requests.BatchGetItem ?? 0),
            int(r.requests.Query ?? 0),
            int(r.requests.UpdateItem ?? 0),
            int(totalRequests(r)),
            `${int(cycle === 'first' ? r.ms : median((name.startsWith('tidewater') ? steadyTw : steadyPeer).map((x) => x.ms)))} ms`,
          ]),
          ['left', 'left', 'right', 'right', 'right', 'right', 'right'],
        ),
        '',
        goal(
          `BatchGetItem calls per cycle (ceil(C·(S+1)/100) = ${goalBatchGets})`,
          lastTw.requests.BatchGetItem ?? 0,
          goalBatchGets,
          false,
          int,
        ),
        goal(
          'UpdateItem calls per steady cycle (one per changed total)',
          lastTw.requests.UpdateItem ?? 0,
          changedPerRound,
          false,
          int,
        ),
        `- requests per steady cycle: ${fixed(totalRequests(steadyPeer.at(-1)!) / totalRequests(lastTw), 1)}× fewer than per-shard; ` +
          `wall time ${fixed(median(steadyPeer.map((x) => x.ms)) / median(steadyTw.map((x) => x.ms)), 1)}× faster.`,
      ].join('\n');
      return {
        markdown,
        data: { contestants: C, shards: S, firstTw, firstPeer, steadyTw, steadyPeer, goalBatchGets },
      };
    } finally {
      await server.stop();
    }
  },
};

export default suite;
