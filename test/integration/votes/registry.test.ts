import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateVotes, VoteCounter } from '../../../src/votes/index.js';
import { countRequests, createVotesTable, newClient } from './support.js';

describe('contestant registry against DynamoDB Local', () => {
  let table: Awaited<ReturnType<typeof createVotesTable>>;
  beforeAll(async () => {
    table = await createVotesTable();
  });
  afterAll(() => table.drop());

  it('holds 10,000 contestants, lists them with paginated Queries (no Scan), and re-registration changes nothing', async () => {
    const dynamodb = newClient();
    const requests = countRequests(dynamodb);
    const counter = new VoteCounter({ tableName: table.tableName, poll: 'big', shards: 2, dynamodb });
    const contestants = Array.from({ length: 10_000 }, (_, i) => `contestant#${i}`);
    expect(await counter.registry.register(contestants)).toBe(10_000);
    expect(requests.get('BatchWriteItemCommand')).toBeGreaterThanOrEqual(400);

    requests.clear();
    const listed = await counter.registry.list({ pageSize: 1_000 });
    expect(listed).toHaveLength(10_000);
    expect(new Set(listed)).toEqual(new Set(contestants));
    expect(requests.get('ScanCommand')).toBeUndefined();
    // 4 registry partitions of ~2,500 items in pages of 1,000: 3 pages each (+1 for a page boundary).
    expect(requests.get('QueryCommand')).toBeGreaterThanOrEqual(12);
    expect(requests.get('QueryCommand')).toBeLessThanOrEqual(16);

    expect(await counter.registry.register(contestants.slice(0, 500))).toBe(500);
    expect(await counter.registry.list()).toHaveLength(10_000);
    // Hang detector, not a performance bound: ~70 s on an idle 2-core machine, ~170 s with its
    // cores busy (DynamoDB Local writes 10,000 items and their stream records).
  }, 600_000);

  it('keeps polls in one table apart', async () => {
    const dynamodb = newClient();
    const base = { tableName: table.tableName, shards: 3, dynamodb };
    const red = new VoteCounter({ ...base, poll: 'red' });
    const blue = new VoteCounter({ ...base, poll: 'blue' });
    await red.registry.register(['same', 'only-red']);
    expect(await blue.registry.register('same')).toBe(1); // one id, not its characters
    await red.castVote('same', 4);
    await blue.castVote('same', 9);
    await Promise.all([aggregateVotes({ ...base, poll: 'red' }), aggregateVotes({ ...base, poll: 'blue' })]);
    expect((await red.registry.list()).sort()).toEqual(['only-red', 'same']);
    expect(await blue.registry.list()).toEqual(['same']);
    expect(await red.getTotal('same', { consistentRead: true })).toBe(4n);
    expect(await blue.getTotal('same', { consistentRead: true })).toBe(9n);
    expect((await red.getTotals({ consistentRead: true })).map((t) => [t.contestant, t.total])).toEqual([
      ['same', 4n],
      ['only-red', 0n],
    ]);
  });
});
