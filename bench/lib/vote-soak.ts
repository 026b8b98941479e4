/**
 * The votes soak: many concurrent votes through VoteCounter's sharded counters while
 * aggregateVotes runs again and again, against a real DynamoDB Local, with faults injected by a
 * middleware on the real client — throttles and 500s before the request is sent (not applied)
 * and 500s after DynamoDB applied it (the write landed, the client saw an error: the ambiguous
 * failure a bare ADD cannot retry, reference 003) — and aggregator runs that crash mid-way (from
 * a random request on, nothing more is sent). Two polls side by side:
 *   exact — castVote with a voterId (marker + ADD in one transaction): the application resends a
 *           failed vote with the same voterId until it is acknowledged; counted must equal cast.
 *   bare  — castVote without a voterId: the documented rule is that an ambiguous failure is not
 *           retried, so a vote the caller saw fail may have landed. Counted must equal the votes
 *           acknowledged plus exactly those the middleware saw applied and then failed.
 * At the end one clean aggregation runs and every published total must equal the sum of its
 * shards. Used by bench/soak.ts and test/integration/soak.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AttributeValue,
  DynamoDBClient,
  GetItemCommand,
  InternalServerError,
  ProvisionedThroughputExceededException,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import pLimit from 'p-limit';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  startDynamoDbLocal,
} from '../../src/local/servers/dynamodb-local.js';
import { aggregateVotes, VoteCounter } from '../../src/votes/index.js';
import { watchEscapes } from './escapes.js';
import { createRandom, type Random } from './random.js';
import { createVotesTable } from './votes-table.js';

export interface VoteSoakFaults {
  /** Requests rejected before sending: half as a throttle, half as a 500 (neither applied). */
  before: number;
  /** Requests DynamoDB applied, then answered to the client as a 500. */
  after: number;
  /** Aggregator runs that crash from a random request on. */
  aggregatorCrash: number;
}

export interface VoteSoakOptions {
  seed: number;
  /** Votes per poll (exact and bare each). */
  votes: number;
  contestants: number;
  shards: number;
  /** Votes in flight at once. */
  concurrency: number;
  faults: VoteSoakFaults;
  /** A vote or an aggregator run not settled after this long is a stall. */
  stallAfterMs?: number;
  /** A running DynamoDB Local (the vitest run's); else the soak starts its own and stops it after. */
  endpoint?: string;
}

export interface VoteSoakResult {
  seed: number;
  votes: number;
  seconds: number;
  processErrors: string[];
  stalls: string[];
  /** Votes and aggregator runs that failed otherwise than the votes APIs document. */
  unexpectedErrors: string[];
  /** Exact poll: votes counted in the shards minus votes cast (0 when exactly once). */
  exactCountOff: number;
  /** Exact poll: marker items whose count is not in the shards, or the other way round. */
  exactMarkersOff: number;
  /** Bare poll: counted − acknowledged − (applied then failed): what the at-most-once-retry rule does not explain. */
  bareUnexplained: number;
  /** Both polls: Σ |published total − sum of its shards| after the last, clean aggregation. */
  totalOff: number;
  detail: {
    /** Bare votes the caller saw fail, and how many of those had landed (the rule's over-count). */
    bareFailed: number;
    /** Exact votes whose transaction landed and was answered 500 (castVote resends it, same token). */
    exactLandedButFailed: number;
    /** Exact votes answered `duplicate` although each voterId is cast once (a resend after a lost answer). */
    exactDuplicates: number;
    bareLandedButFailed: number;
    /** Exact votes the application had to resend (the first try failed). */
    exactResent: number;
    /** Aggregator runs: completed, crashed as injected, ended incomplete under the faults. */
    aggregations: { completed: number; crashed: number; incomplete: number };
    injected: { throttles: number; before500: number; after500: number; crashes: number };
  };
}

const POLLS = { exact: 'soak-exact', bare: 'soak-bare' } as const;

class InjectedCrash extends Error {
  override name = 'InjectedCrash';
}

interface FaultState {
  random: Random;
  faults: VoteSoakFaults;
  on: boolean;
  injected: VoteSoakResult['detail']['injected'];
  /** Bare ADDs DynamoDB applied whose answer the middleware replaced with a 500, by vote amount. */
  bareLandedButFailed: number;
  /** The same, by the bare vote (castBare's AsyncLocalStorage) whose request it was. */
  landedByVote: Map<number, number>;
  vote: AsyncLocalStorage<number>;
  /** Exact-poll transactions DynamoDB applied whose answer the middleware replaced with a 500. */
  exactLandedButFailed: number;
}

const addOf = (input: unknown): number | undefined => {
  const i = input as {
    UpdateExpression?: string;
    ExpressionAttributeValues?: Record<string, AttributeValue>;
  };
  if (i.UpdateExpression !== 'ADD #votes :n') return undefined;
  return Number(i.ExpressionAttributeValues?.[':n']?.N);
};

/**
 * The faults, on the real client at finalizeRequest (inside the SDK's retry loop, so an injected
 * client with SDK retries would meet each one): before sending, or after DynamoDB answered.
 */
function faultyClient(endpoint: string, state: FaultState, crashAt?: number): DynamoDBClient {
  // maxAttempts 1 as PollOptions.dynamodb asks: the votes code does its own retrying.
  const client = new DynamoDBClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint,
    maxAttempts: 1,
  });
  let sent = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      sent++;
      if (crashAt !== undefined && sent >= crashAt) {
        if (sent === crashAt) state.injected.crashes++;
        throw new InjectedCrash('injected: the aggregator process died');
      }
      if (!state.on) return next(args);
      const roll = state.random.next();
      if (roll < state.faults.before) {
        if (state.random.next() < 0.5) {
          state.injected.throttles++;
          throw new ProvisionedThroughputExceededException({
            message: 'injected throttle',
            $metadata: { httpStatusCode: 400 },
          });
        }
        state.injected.before500++;
        throw new InternalServerError({
          message: 'injected before sending',
          $metadata: { httpStatusCode: 500 },
        });
      }
      const result = await next(args);
      if (roll < state.faults.before + state.faults.after) {
        state.injected.after500++;
        const amount = context.commandName === 'UpdateItemCommand' ? addOf(args.input) : undefined;
        if (amount !== undefined) {
          state.bareLandedButFailed += amount;
          const vote = state.vote.getStore();
          if (vote !== undefined) state.landedByVote.set(vote, (state.landedByVote.get(vote) ?? 0) + amount);
        }
        if (context.commandName === 'TransactWriteItemsCommand') state.exactLandedButFailed++;
        throw new InternalServerError({
          message: 'injected after applying',
          $metadata: { httpStatusCode: 500 },
        });
      }
      return result;
    },
    { step: 'finalizeRequest', name: 'soakFaults' },
  );
  return client;
}

/** Settles with the promise, or records a stall after `ms` and settles without it. */
async function watched<T>(
  label: string,
  work: Promise<T>,
  ms: number,
  stalls: string[],
): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      stalls.push(`${label}: not settled after ${ms} ms`);
      resolve(undefined);
    }, ms);
  });
  try {
    return await Promise.race([work, stalled]);
  } finally {
    clearTimeout(timer);
  }
}

export async function runVoteSoak(options: VoteSoakOptions): Promise<VoteSoakResult> {
  const started = performance.now();
  const stallAfterMs = options.stallAfterMs ?? 60_000;
  const escapes = watchEscapes();
  const stalls: string[] = [];
  const samples: string[] = [];
  const dynamo =
    options.endpoint === undefined
      ? await startDynamoDbLocal()
      : { endpoint: options.endpoint, stop: async () => undefined };
  // Its own table: on a shared DynamoDB Local another soak's votes must not mix in.
  const TABLE = `soak-votes-${options.seed}-${process.pid}-${Math.round(started)}`;
  const state: FaultState = {
    random: createRandom(options.seed ^ 0x70e5),
    on: true,
    faults: options.faults,
    injected: { throttles: 0, before500: 0, after500: 0, crashes: 0 },
    bareLandedButFailed: 0,
    landedByVote: new Map(),
    vote: new AsyncLocalStorage(),
    exactLandedButFailed: 0,
  };
  const clean = new DynamoDBClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: dynamo.endpoint,
  });
  const clients: DynamoDBClient[] = [clean];
  try {
    await createVotesTable(clean, TABLE);
    const contestants = Array.from({ length: options.contestants }, (_, i) => `c${i}`);
    const poll = (name: string, dynamodb: DynamoDBClient) => ({
      tableName: TABLE,
      poll: name,
      shards: options.shards,
      dynamodb,
    });
    // Registration is set-up, not under test here: on the clean client.
    for (const name of Object.values(POLLS))
      await new VoteCounter(poll(name, clean)).registry.register(contestants);

    const voterClient = faultyClient(dynamo.endpoint, state);
    clients.push(voterClient);
    const exact = new VoteCounter(poll(POLLS.exact, voterClient));
    const bare = new VoteCounter(poll(POLLS.bare, voterClient));
    const random = createRandom(options.seed);
    const plan = Array.from({ length: options.votes }, (_, i) => ({
      i,
      contestant: random.pick(contestants),
      amount: random.int(1, 3),
    }));
    let exactCast = 0;
    let exactResent = 0;
    let exactDuplicates = 0;
    let bareAcknowledged = 0;
    let bareFailed = 0;
    const limit = pLimit(options.concurrency);
    const castExact = async (v: (typeof plan)[number]): Promise<void> => {
      // The application's side of exactly-once: resend with the same voterId until acknowledged.
      for (let attempt = 0; ; attempt++) {
        try {
          const result = await exact.castVote(v.contestant, v.amount, { voterId: `voter-${v.i}` });
          if (result.status === 'duplicate') exactDuplicates++;
          exactCast += v.amount;
          return;
        } catch (error) {
          if ((error as Error).name !== 'VoteRequestFailedError' || attempt >= 50) throw error;
          if (attempt === 0) exactResent++;
        }
      }
    };
    // The rule explains a landed write only for a vote whose caller saw it fail; one that landed
    // and was then acknowledged too (a resent ADD) counted twice, and stays unexplained.
    let bareExplained = 0;
    const castBare = async (v: (typeof plan)[number]): Promise<void> => {
      try {
        await state.vote.run(v.i, () => bare.castVote(v.contestant, v.amount));
        bareAcknowledged += v.amount;
      } catch (error) {
        // The documented failures: retries exhausted, or an ambiguous one a bare ADD must not retry.
        if (!['VoteRequestFailedError', 'InternalServerError'].includes((error as Error).name)) throw error;
        bareFailed += v.amount;
        bareExplained += state.landedByVote.get(v.i) ?? 0;
      }
    };
    let voting = true;
    const voteErrors = (label: string) => (error: unknown) => {
      samples.push(`${label}: ${(error as Error).name}: ${(error as Error).message}`);
    };
    const votes = Promise.all(
      plan.flatMap((v) => [
        limit(() =>
          watched(`exact vote ${v.i}`, castExact(v), stallAfterMs, stalls).catch(voteErrors('exact vote')),
        ),
        limit(() =>
          watched(`bare vote ${v.i}`, castBare(v), stallAfterMs, stalls).catch(voteErrors('bare vote')),
        ),
      ]),
    ).finally(() => {
      voting = false;
    });

    const aggregations = { completed: 0, crashed: 0, incomplete: 0 };
    const aggregateOnce = async (name: string, run: number): Promise<void> => {
      // A crash at a random request of the run (a run reads ~ C·(S+1)/100 batches and writes C totals).
      const crashAt =
        state.random.next() < options.faults.aggregatorCrash
          ? 1 + Math.floor(state.random.next() * (contestants.length + 4))
          : undefined;
      const client = faultyClient(dynamo.endpoint, state, crashAt);
      try {
        await watched(
          `aggregation ${run} of ${name}`,
          aggregateVotes(poll(name, client)),
          stallAfterMs,
          stalls,
        );
        aggregations.completed++;
      } catch (error) {
        const name = (error as Error).name;
        const cause = (error as { cause?: { name?: string } }).cause?.name;
        if (name === 'InjectedCrash' || cause === 'InjectedCrash') aggregations.crashed++;
        else if (name === 'AggregationIncompleteError' || name === 'VoteRequestFailedError')
          aggregations.incomplete++;
        else samples.push(`aggregation: ${name}: ${(error as Error).message}`);
      } finally {
        client.destroy();
      }
    };
    // Two aggregators on a schedule, overlapping now and then, while the votes go on.
    const aggregators = [0, 1].map(async (lane) => {
      let run = 0;
      while (voting) {
        await Promise.all(Object.values(POLLS).map((name) => aggregateOnce(name, run)));
        run++;
        await sleep(20 + lane * 15);
      }
    });
    await votes;
    await Promise.all(aggregators);

    // The last run, as the schedule's next one would be once the faults pass: it must publish all.
    state.on = false;
    for (const name of Object.values(POLLS)) await aggregateVotes(poll(name, clean));

    const readAll = async (pk: string): Promise<Record<string, AttributeValue>[]> => {
      const items: Record<string, AttributeValue>[] = [];
      let start: Record<string, AttributeValue> | undefined;
      do {
        const page = await clean.send(
          new QueryCommand({
            TableName: TABLE,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': { S: pk } },
            ExclusiveStartKey: start,
            ConsistentRead: true,
          }),
        );
        items.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start);
      return items;
    };
    const shardSum = async (name: string, contestant: string): Promise<number> => {
      let sum = 0;
      for (let k = 0; k < options.shards; k++)
        for (const item of await readAll(`POLL#${name}#VOTE#${contestant}#${k}`))
          sum += Number(item.votes?.N ?? 0);
      return sum;
    };
    const counter = (name: string) => new VoteCounter(poll(name, clean));
    let totalOff = 0;
    const counted = { exact: 0, bare: 0 };
    const reads = pLimit(16);
    await Promise.all(
      (Object.entries(POLLS) as ['exact' | 'bare', string][]).flatMap(([key, name]) =>
        contestants.map((contestant) =>
          reads(async () => {
            const sum = await shardSum(name, contestant);
            counted[key] += sum;
            const total = await counter(name).getTotal(contestant, { consistentRead: true });
            totalOff += Math.abs(Number(total) - sum);
          }),
        ),
      ),
    );
    let markers = 0;
    await Promise.all(
      plan.map((v) =>
        reads(async () => {
          const item = await clean.send(
            new GetItemCommand({
              TableName: TABLE,
              Key: { pk: { S: `POLL#${POLLS.exact}#VOTER#voter-${v.i}` }, sk: { S: 'MARKER' } },
              ConsistentRead: true,
            }),
          );
          markers += Number(item.Item?.count?.N ?? 0);
        }),
      ),
    );
    return {
      seed: options.seed,
      votes: options.votes * 2,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      processErrors: escapes.errors,
      unexpectedErrors: samples,
      stalls,
      exactCountOff: counted.exact - exactCast,
      exactMarkersOff: counted.exact - markers,
      bareUnexplained: counted.bare - bareAcknowledged - bareExplained,
      totalOff,
      detail: {
        bareFailed,
        exactDuplicates,
        exactLandedButFailed: state.exactLandedButFailed,
        bareLandedButFailed: state.bareLandedButFailed,
        exactResent,
        aggregations,
        injected: state.injected,
      },
    };
  } finally {
    for (const client of clients) client.destroy();
    await dynamo.stop();
    await escapes.stop();
  }
}
