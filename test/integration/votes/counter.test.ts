import { GetItemCommand, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateVotes, VoteCounter, VoteRequestFailedError } from '../../../src/votes/index.js';
import { PollKeys } from '../../../src/votes/keys.js';
import { createVotesTable, foreignSdkErrors, loseNextResponse, newClient } from './support.js';

describe('VoteCounter against DynamoDB Local', () => {
  let table: Awaited<ReturnType<typeof createVotesTable>>;
  beforeAll(async () => {
    table = await createVotesTable();
  });
  afterAll(() => table.drop());

  it('adds each vote to one of the N shard items of the contestant, under the poll prefix', async () => {
    const dynamodb = newClient();
    const counter = new VoteCounter({ tableName: table.tableName, poll: 'shards', shards: 5, dynamodb });
    const used = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const result = await counter.castVote('alice');
      expect(result.status).toBe('counted');
      if (result.status === 'counted') used.add(result.shard);
    }
    expect([...used].every((k) => k >= 0 && k < 5)).toBe(true);
    expect(used.size).toBeGreaterThan(1);
    let sum = 0n;
    for (let k = 0; k < 5; k++) {
      const item = await dynamodb.send(
        new GetItemCommand({
          TableName: table.tableName,
          Key: { pk: { S: `POLL#shards#VOTE#alice#${k}` }, sk: { S: 'COUNT' } },
          ConsistentRead: true,
        }),
      );
      expect(used.has(k)).toBe(item.Item !== undefined);
      sum += BigInt(item.Item?.votes?.N ?? '0');
    }
    expect(sum).toBe(40n);
  });

  it('exactly-once mode: the same voter retried 10 times counts once; a different voter counts', async () => {
    const dynamodb = newClient();
    const options = { tableName: table.tableName, poll: 'once', shards: 4, dynamodb };
    const counter = new VoteCounter(options);
    await counter.registry.register(['bob']);

    const sequential = [];
    for (let i = 0; i < 10; i++) sequential.push(await counter.castVote('bob', 1, { voterId: 'voter-1' }));
    expect(sequential.map((r) => r.status)).toEqual(['counted', ...Array(9).fill('duplicate')]);

    // Ten concurrent retries of another voter's request: transactions conflict and are retried.
    const concurrent = await Promise.all(
      Array.from({ length: 10 }, () => counter.castVote('bob', 1, { voterId: 'voter-2' })),
    );
    expect(concurrent.filter((r) => r.status === 'counted')).toHaveLength(1);

    expect((await counter.castVote('bob', 1, { voterId: 'voter-3' })).status).toBe('counted');
    await aggregateVotes(options);
    expect(await counter.getTotal('bob', { consistentRead: true })).toBe(3n);

    const marker = await dynamodb.send(
      new GetItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: 'POLL#once#VOTER#voter-1' }, sk: { S: 'MARKER' } },
      }),
    );
    expect(marker.Item?.contestant?.S).toBe('bob');
  });

  it('exactly-once mode reads the cancellation reasons of a client from another copy of the SDK', async () => {
    const dynamodb = newClient();
    const foreign = foreignSdkErrors(dynamodb);
    const options = { tableName: table.tableName, poll: 'foreign', shards: 4, dynamodb };
    const counter = new VoteCounter(options);
    await counter.registry.register(['gail']);

    // Already voted: DynamoDB cancels with ConditionalCheckFailed on the marker; not an error.
    const sequential = [];
    for (let i = 0; i < 3; i++) sequential.push(await counter.castVote('gail', 1, { voterId: 'v-1' }));
    expect(sequential.map((r) => r.status)).toEqual(['counted', 'duplicate', 'duplicate']);
    // Concurrent copies of one request: the cancellations they get are retried, one counts.
    const concurrent = await Promise.all(
      Array.from({ length: 6 }, () => counter.castVote('gail', 1, { voterId: 'v-2' })),
    );
    expect(concurrent.filter((r) => r.status === 'counted')).toHaveLength(1);
    expect(foreign.rethrown.length).toBeGreaterThanOrEqual(2 + 5);
    expect(new Set(foreign.rethrown)).toEqual(new Set(['TransactionCanceledException']));

    await aggregateVotes(options);
    expect(await counter.getTotal('gail', { consistentRead: true })).toBe(2n);
  });

  it('exactly-once mode retries a lost response without counting twice', async () => {
    const dynamodb = newClient();
    const lost = loseNextResponse(dynamodb, 'TransactWriteItemsCommand');
    const options = { tableName: table.tableName, poll: 'lost', shards: 3, dynamodb };
    const counter = new VoteCounter(options);
    await counter.registry.register(['carol']);
    const result = await counter.castVote('carol', 1, { voterId: 'v' });
    expect(lost.lost).toBe(1);
    // The retry carries the committed attempt's ClientRequestToken: answered as that success.
    expect(result.status).toBe('counted');
    await aggregateVotes(options);
    expect(await counter.getTotal('carol', { consistentRead: true })).toBe(1n);
  });

  it('exactly-once mode answers duplicate when the condition fails on the last allowed attempt', async () => {
    const options = { tableName: table.tableName, poll: 'lastattempt', shards: 2 };
    const first = new VoteCounter({ ...options, dynamodb: newClient() });
    await first.registry.register(['frank']);
    expect((await first.castVote('frank', 1, { voterId: 'v' })).status).toBe('counted');

    // The retry of this voter's request: its first attempt is cancelled by a conflict (never
    // applied), its second and last reaches DynamoDB and fails the marker's condition.
    const dynamodb = newClient();
    let sent = 0;
    dynamodb.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand' && sent++ === 0) {
          throw new TransactionCanceledException({
            message: 'injected: transaction cancelled',
            $metadata: {},
            CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }],
          });
        }
        return next(args);
      },
      { step: 'initialize', name: 'conflictOnce' },
    );
    const retry = new VoteCounter({ ...options, maxAttempts: 2, dynamodb });
    expect(await retry.castVote('frank', 1, { voterId: 'v' })).toEqual({ status: 'duplicate' });
    expect(sent).toBe(2);
    await aggregateVotes({ ...options, dynamodb: newClient() });
    expect(await first.getTotal('frank', { consistentRead: true })).toBe(1n);
  });

  it('plain mode does not resend an ADD whose response was lost (it would count twice)', async () => {
    const dynamodb = newClient();
    loseNextResponse(dynamodb, 'UpdateItemCommand');
    const options = { tableName: table.tableName, poll: 'plainlost', shards: 3, dynamodb };
    const counter = new VoteCounter(options);
    await counter.registry.register(['dave']);
    await expect(counter.castVote('dave')).rejects.toMatchObject({ name: 'TimeoutError' });
    await aggregateVotes({ ...options, dynamodb: newClient() });
    expect(await counter.getTotal('dave', { consistentRead: true })).toBe(1n);
  });

  it('gives up on persistent throttling with VoteRequestFailedError naming the attempts', async () => {
    const dynamodb = newClient();
    dynamodb.middlewareStack.add(
      () => async () => {
        const error = new Error('throttled');
        error.name = 'ProvisionedThroughputExceededException';
        throw error;
      },
      { step: 'initialize', name: 'alwaysThrottle' },
    );
    const counter = new VoteCounter({
      tableName: table.tableName,
      poll: 'busy',
      shards: 2,
      maxAttempts: 3,
      dynamodb,
    });
    const error = await counter.castVote('erin').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VoteRequestFailedError);
    expect(error).toMatchObject({ name: 'VoteRequestFailedError', attempts: 3 });
  });

  it('keeps a total beyond 2^53 exact, from shards to the published total', async () => {
    const dynamodb = newClient();
    const options = { tableName: table.tableName, poll: 'big', shards: 8, dynamodb };
    const counter = new VoteCounter(options);
    await counter.registry.register(['whale']);
    const weights = [2n ** 53n + 1n, 2n ** 60n + 7n, 9_007_199_254_740_993n, 10n ** 30n + 3n, 1n];
    for (const weight of weights) await counter.castVote('whale', weight);
    await counter.castVote('whale', 12_345);
    const expected = weights.reduce((a, b) => a + b, 0n) + 12_345n;

    const summary = await aggregateVotes(options);
    expect(summary.totalsWritten).toBe(1);
    expect(await counter.getTotal('whale', { consistentRead: true })).toBe(expected);
    const raw = await dynamodb.send(
      new GetItemCommand({
        TableName: table.tableName,
        Key: new PollKeys('big', 4).total('whale'),
        ConsistentRead: true,
      }),
    );
    expect(raw.Item?.total?.N).toBe(expected.toString());
    const [board] = await counter.getTotals({ consistentRead: true });
    expect(board?.total.toString()).toBe(expected.toString());
  });
});
