import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AggregationIncompleteError, aggregateVotes, VoteCounter } from '../../../src/votes/index.js';
import {
  captureInputs,
  countRequests,
  createVotesTable,
  holdBatchReads,
  injectFaults,
  newClient,
  trackInFlight,
} from './support.js';

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
    const sent = captureInputs(dynamodb);
    const options = { tableName: table.tableName, poll, shards: 6, dynamodb };
    const first = await aggregateVotes(options);
    expect(first).toMatchObject({ contestants: 30, shardsRead: 180, totalsWritten: 30, totalsUnchanged: 0 });
    expect(first.requests.batchGetItem).toBe(Math.ceil((30 * 7) / 100));
    expect(requests.get('UpdateItemCommand')).toBe(30);
    expect(first.consumedReadCapacityUnits).toBeGreaterThan(0);
    expect(first.consumedWriteCapacityUnits).toBeGreaterThan(0);

    // DynamoDB Local is always consistent, so the request shape is what shows strong reads: every
    // shard key and every total key once, at most 100 per call, ConsistentRead on each, no Scan.
    type BatchGet = {
      RequestItems: Record<string, { Keys: Array<Record<string, { S: string }>>; ConsistentRead?: boolean }>;
    };
    const batchGets = sent.filter((s) => s.command === 'BatchGetItemCommand').map((s) => s.input as BatchGet);
    const requested: string[] = [];
    for (const input of batchGets) {
      const request = input.RequestItems[table.tableName]!;
      expect(request.ConsistentRead).toBe(true);
      expect(request.Keys.length).toBeLessThanOrEqual(100);
      for (const key of request.Keys) requested.push(`${key.pk!.S}|${key.sk!.S}`);
    }
    expect(new Set(requested).size).toBe(requested.length);
    expect(requested.filter((k) => k.includes('#VOTE#'))).toHaveLength(180);
    expect(requested.filter((k) => k.includes('#TOTALS#'))).toHaveLength(30);
    const queries = sent.filter((s) => s.command === 'QueryCommand');
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.every((q) => (q.input as { ConsistentRead?: boolean }).ConsistentRead === true)).toBe(
      true,
    );
    expect(requests.get('ScanCommand')).toBeUndefined();

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

  it('keeps at most `concurrency` requests in flight, the registry Queries included', async () => {
    const poll = 'bounded';
    const base = { tableName: table.tableName, poll, shards: 3, registryPartitions: 12 };
    const writer = new VoteCounter({ ...base, dynamodb: newClient() });
    const contestants = Array.from({ length: 120 }, (_, i) => `c${i}`);
    await writer.registry.register(contestants);
    for (const contestant of contestants.slice(0, 40)) await writer.castVote(contestant, 2);

    const dynamodb = newClient();
    const inFlight = trackInFlight(dynamodb);
    const summary = await aggregateVotes({ ...base, concurrency: 2, dynamodb });
    expect(summary).toMatchObject({ contestants: 120, totalsWritten: 120, failedContestants: 0 });
    expect(summary.requests.query).toBeGreaterThanOrEqual(12);
    expect(summary.requests.batchGetItem).toBe(Math.ceil((120 * 4) / 100));
    expect(inFlight.peak.get('QueryCommand')).toBeLessThanOrEqual(2);
    expect(inFlight.peakAll()).toBeLessThanOrEqual(2);
    // Bounded, not serialised: the limit is used.
    expect(inFlight.peakAll()).toBe(2);
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

    let decreases = 0;
    const aggregatorRuns: Array<Awaited<ReturnType<typeof aggregateVotes>>> = [];
    const aggregatorFaults: Array<ReturnType<typeof injectFaults>> = [];
    const aggregators = Array.from({ length: 3 }, async (_, a) => {
      const dynamodb = newClient();
      aggregatorFaults.push(
        injectFaults(dynamodb, { throttleRate: 0.15, unprocessedRate: 0.4, seed: 7 + a }),
      );
      const reader = new VoteCounter({ ...base, dynamodb: newClient() });
      // Per reader: its reads are sequential, so a lower total than its previous read is a real
      // decrease. Shared across readers, one reader's older answer processed after another's
      // newer one would look like a decrease that never happened.
      const seen = new Map<string, bigint>();
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

    // One more vote for every contestant, then the final run through the same injected throttles
    // and UnprocessedKeys: it must rewrite every total, so a run that lost part of a partial
    // BatchGetItem answer would publish an undercount here (a clean final run would hide it).
    const lastVotes = new VoteCounter({ ...base, dynamodb: newClient() });
    for (const contestant of contestants) {
      await lastVotes.castVote(contestant);
      expected.set(contestant, expected.get(contestant)! + 1n);
    }
    const finalClient = newClient();
    const finalFaults = injectFaults(finalClient, { throttleRate: 0.15, unprocessedRate: 0.5, seed: 99 });
    const final = await aggregateVotes({ ...base, dynamodb: finalClient, maxAttempts: 30, concurrency: 4 });
    expect(final).toMatchObject({ failedContestants: 0, totalsWritten: 50, totalsSuperseded: 0 });
    expect(final.unprocessedRetries).toBeGreaterThan(0);
    expect(finalFaults.stripped).toBeGreaterThan(0);
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
    // Hang detector, not a performance bound: ~20 s idle, ~90 s on a 2-core machine with its cores busy.
  }, 600_000);
});
