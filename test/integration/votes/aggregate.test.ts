import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AggregationIncompleteError, aggregateVotes, VoteCounter } from '../../../src/votes/index.js';
import { countRequests, createVotesTable, holdBatchReads, injectFaults, newClient } from './support.js';

describe('aggregateVotes against DynamoDB Local', () => {
  let table: Awaited<ReturnType<typeof createVotesTable>>;
  beforeAll(async () => {
    table = await createVotesTable();
  });
  afterAll(() => table.drop());

  it('reads ceil(C·(S+1)/100) batches and rewrites only the totals that changed', async () => {
    const poll = 'unchanged';
    const writer = new VoteCounter({ tableName: table.tableName, poll, shards: 6, dynamodb: newClient() });
    const contestants = Array.from({ length: 30 }, (_, i) => `c${i}`);
    await writer.registry.register(contestants);
    for (const [i, contestant] of contestants.entries()) await writer.castVote(contestant, i + 1);

    const dynamodb = newClient();
    const requests = countRequests(dynamodb);
    const options = { tableName: table.tableName, poll, shards: 6, dynamodb };
    const first = await aggregateVotes(options);
    expect(first).toMatchObject({ contestants: 30, shardsRead: 180, totalsWritten: 30, totalsUnchanged: 0 });
    expect(first.requests.batchGetItem).toBe(Math.ceil((30 * 7) / 100));
    expect(requests.get('UpdateItemCommand')).toBe(30);

    requests.clear();
    const second = await aggregateVotes(options);
    expect(second).toMatchObject({ totalsWritten: 0, totalsUnchanged: 30, totalsSuperseded: 0 });
    expect(requests.get('UpdateItemCommand')).toBeUndefined();
    expect(requests.get('BatchGetItemCommand')).toBe(3);

    await writer.castVote('c3');
    await writer.castVote('c17', 5);
    requests.clear();
    const third = await aggregateVotes(options);
    expect(third).toMatchObject({ totalsWritten: 2, totalsUnchanged: 28 });
    expect(requests.get('UpdateItemCommand')).toBe(2);

    const board = await writer.getTotals({ consistentRead: true });
    expect(board).toHaveLength(30);
    expect(board[0]).toMatchObject({ contestant: 'c29', total: 30n });
    expect(board.find((t) => t.contestant === 'c17')?.total).toBe(23n);
    expect(board.find((t) => t.contestant === 'c3')?.total).toBe(5n);
  });

  it('a slower concurrent run never replaces a newer total with its older sum', async () => {
    const poll = 'race';
    const writer = new VoteCounter({ tableName: table.tableName, poll, shards: 4, dynamodb: newClient() });
    await writer.registry.register(['x']);
    await writer.castVote('x', 10);

    const slowClient = newClient();
    const hold = holdBatchReads(slowClient);
    const slow = aggregateVotes({ tableName: table.tableName, poll, shards: 4, dynamodb: slowClient });
    await hold.firstHeld; // the slow run has read 10 and is stalled before publishing

    await writer.castVote('x', 5);
    const fast = await aggregateVotes({ tableName: table.tableName, poll, shards: 4, dynamodb: newClient() });
    expect(fast.totalsWritten).toBe(1);
    expect(await writer.getTotal('x', { consistentRead: true })).toBe(15n);

    hold.release();
    const late = await slow;
    expect(late).toMatchObject({ totalsWritten: 0, totalsSuperseded: 1 });
    expect(await writer.getTotal('x', { consistentRead: true })).toBe(15n);
  });

  it('throws AggregationIncompleteError when reads keep failing, and publishes nothing wrong', async () => {
    const poll = 'failing';
    const options = { tableName: table.tableName, poll, shards: 3 };
    const writer = new VoteCounter({ ...options, dynamodb: newClient() });
    await writer.registry.register(['a', 'b']);
    await writer.castVote('a', 2);
    await aggregateVotes({ ...options, dynamodb: newClient() });
    await writer.castVote('a', 2);

    const dynamodb = newClient();
    injectFaults(dynamodb, { throttleRate: 0, unprocessedRate: 1, seed: 1 });
    const summaries: unknown[] = [];
    const error = await aggregateVotes({
      ...options,
      dynamodb,
      maxAttempts: 2,
      logger: { info: (summary) => summaries.push(summary) },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AggregationIncompleteError);
    expect(error).toMatchObject({ name: 'AggregationIncompleteError', failedContestants: ['a', 'b'] });
    expect(summaries).toEqual([expect.objectContaining({ failedContestants: 2, totalsWritten: 0 })]);
    expect(await writer.getTotal('a', { consistentRead: true })).toBe(2n);

    const recovered = await aggregateVotes({ ...options, dynamodb: newClient() });
    expect(recovered.totalsWritten).toBe(1);
    expect(await writer.getTotal('a', { consistentRead: true })).toBe(4n);
  });

  it('counts every vote exactly: 8 writers, 50 contestants × 10 shards, 3 concurrent aggregators, injected faults', async () => {
    const poll = 'storm';
    const shards = 10;
    const base = { tableName: table.tableName, poll, shards };
    const contestants = Array.from({ length: 50 }, (_, i) => `contestant-${i}`);
    await new VoteCounter({ ...base, dynamodb: newClient() }).registry.register(contestants);

    const votesPerWriter = 375; // 8 × 375 = 3,000 votes, plus 300 duplicate exactly-once retries
    const expected = new Map<string, bigint>(contestants.map((c) => [c, 0n]));
    let writersDone = false;
    const writerFaults: Array<ReturnType<typeof injectFaults>> = [];

    const writers = Array.from({ length: 8 }, async (_, w) => {
      const dynamodb = newClient();
      writerFaults.push(injectFaults(dynamodb, { throttleRate: 0.1, seed: 100 + w }));
      const counter = new VoteCounter({ ...base, dynamodb, maxAttempts: 20 });
      for (let i = 0; i < votesPerWriter; i++) {
        const contestant = contestants[Math.floor(Math.random() * contestants.length)]!;
        const weight = 1 + (i % 3);
        if (i % 10 === 0) {
          // Exactly-once votes, each sent twice as a client retry would: counted once.
          const voterId = `w${w}-v${i}`;
          await counter.castVote(contestant, weight, { voterId });
          expect((await counter.castVote(contestant, weight, { voterId })).status).toBe('duplicate');
        } else {
          await counter.castVote(contestant, weight);
        }
        expected.set(contestant, expected.get(contestant)! + BigInt(weight));
      }
    });

    const seen = new Map<string, bigint>();
    let decreases = 0;
    const aggregatorRuns: Array<Awaited<ReturnType<typeof aggregateVotes>>> = [];
    const aggregatorFaults: Array<ReturnType<typeof injectFaults>> = [];
    const aggregators = Array.from({ length: 3 }, async (_, a) => {
      const dynamodb = newClient();
      aggregatorFaults.push(
        injectFaults(dynamodb, { throttleRate: 0.15, unprocessedRate: 0.4, seed: 7 + a }),
      );
      const reader = new VoteCounter({ ...base, dynamodb: newClient() });
      while (!writersDone) {
        aggregatorRuns.push(await aggregateVotes({ ...base, dynamodb, maxAttempts: 30, concurrency: 4 }));
        for (const { contestant, total } of await reader.getTotals({ consistentRead: true })) {
          if (total < (seen.get(contestant) ?? 0n)) decreases++;
          seen.set(contestant, total);
        }
        // A scheduler's gap between runs; also leaves DynamoDB Local's 2 cores to the writers.
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    });

    await Promise.all(writers);
    writersDone = true;
    await Promise.all(aggregators);

    const final = await aggregateVotes({ ...base, dynamodb: newClient() });
    expect(final.failedContestants).toBe(0);
    const reader = new VoteCounter({ ...base, dynamodb: newClient() });
    const totals = await reader.getTotals({ consistentRead: true });
    expect(new Map(totals.map((t) => [t.contestant, t.total]))).toEqual(expected);
    expect(totals.reduce((sum, t) => sum + t.total, 0n)).toBe(
      [...expected.values()].reduce((a, b) => a + b, 0n),
    );

    expect(decreases).toBe(0);
    expect(aggregatorRuns.length).toBeGreaterThanOrEqual(3);
    expect(aggregatorRuns.every((run) => run.failedContestants === 0)).toBe(true);
    expect(aggregatorRuns.reduce((n, run) => n + run.unprocessedRetries, 0)).toBeGreaterThan(0);
    expect(aggregatorRuns.reduce((n, run) => n + run.retries, 0)).toBeGreaterThan(0);
    expect(writerFaults.reduce((n, f) => n + f.throttled, 0)).toBeGreaterThan(0);
    expect(aggregatorFaults.reduce((n, f) => n + f.stripped, 0)).toBeGreaterThan(0);
  }, 180_000);
});
