import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateVotes, InvalidVoteOptionsError, VoteCounter } from '../../../src/votes/index.js';
import { countRequests, createVotesTable, newClient } from './support.js';

describe("a poll's recorded layout (POLL#<poll>#CONFIG)", () => {
  let table: Awaited<ReturnType<typeof createVotesTable>>;
  beforeAll(async () => {
    table = await createVotesTable();
  });
  afterAll(() => table.drop());

  it('is written by the first registration and holds shards and registryPartitions', async () => {
    const dynamodb = newClient();
    const counter = new VoteCounter({ tableName: table.tableName, poll: 'rec', shards: 5, dynamodb });
    await counter.registry.register(['a']);
    const item = await dynamodb.send(
      new GetItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: 'POLL#rec#CONFIG' }, sk: { S: 'CONFIG' } },
        ConsistentRead: true,
      }),
    );
    expect(item.Item).toMatchObject({ shards: { N: '5' }, registryPartitions: { N: '4' } });
  });

  it('makes an aggregator with another shard count or partition count refuse to run', async () => {
    const base = { tableName: table.tableName, poll: 'mismatch' };
    const writer = new VoteCounter({ ...base, shards: 5, dynamodb: newClient() });
    await writer.registry.register(['a', 'b']);
    for (let i = 0; i < 20; i++) await writer.castVote('a');

    // The deployed default (10 shards) against writers using 5: without the check this would
    // sum shards 0-9, which happens to include 0-4; with 3 it would publish an undercount.
    for (const shards of [10, 3]) {
      const error = await aggregateVotes({ ...base, shards, dynamodb: newClient() }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidVoteOptionsError);
      expect(error).toMatchObject({ name: 'InvalidVoteOptionsError', option: 'shards' });
      expect(String(error)).toMatch(/shards=5, registryPartitions=4/);
    }
    await expect(
      aggregateVotes({ ...base, shards: 5, registryPartitions: 8, dynamodb: newClient() }),
    ).rejects.toMatchObject({ name: 'InvalidVoteOptionsError', option: 'registryPartitions' });
    // Nothing was published by the refused runs.
    expect(await writer.getTotal('a', { consistentRead: true })).toBe(0n);

    const summary = await aggregateVotes({ ...base, shards: 5, dynamodb: newClient() });
    expect(summary).toMatchObject({ contestants: 2, shards: 5, totalsWritten: 2 });
    expect(await writer.getTotal('a', { consistentRead: true })).toBe(20n);
  });

  it('makes a writer with other numbers fail before it writes a vote', async () => {
    const base = { tableName: table.tableName, poll: 'writers' };
    await new VoteCounter({ ...base, shards: 4, dynamodb: newClient() }).registry.register('a');

    const dynamodb = newClient();
    const requests = countRequests(dynamodb);
    const stray = new VoteCounter({ ...base, shards: 6, dynamodb });
    await expect(stray.castVote('a')).rejects.toMatchObject({
      name: 'InvalidVoteOptionsError',
      option: 'shards',
    });
    await expect(stray.registry.register('b')).rejects.toThrow(InvalidVoteOptionsError);
    await expect(stray.castVote('a', 1, { voterId: 'v' })).rejects.toThrow(InvalidVoteOptionsError);
    expect(requests.get('UpdateItemCommand')).toBeUndefined();
    expect(requests.get('TransactWriteItemsCommand')).toBeUndefined();
    expect(requests.get('BatchWriteItemCommand')).toBeUndefined();
    // The mismatch is remembered: one check, not one per call.
    expect(requests.get('PutItemCommand')).toBe(1);

    await expect(
      new VoteCounter({ ...base, shards: 4, registryPartitions: 2, dynamodb: newClient() }).castVote('a'),
    ).rejects.toMatchObject({ option: 'registryPartitions' });
  });

  it('is checked once per counter, not once per vote', async () => {
    const dynamodb = newClient();
    const requests = countRequests(dynamodb);
    const counter = new VoteCounter({ tableName: table.tableName, poll: 'once', shards: 2, dynamodb });
    await Promise.all(Array.from({ length: 5 }, () => counter.castVote('a')));
    await counter.registry.register(['a', 'b']);
    for (let i = 0; i < 5; i++) await counter.castVote('b', 1, { voterId: `v${i}` });
    expect(requests.get('PutItemCommand')).toBe(1);
    expect(requests.get('UpdateItemCommand')).toBe(5);
  });

  it('lets an aggregator run on a poll written before layouts were recorded', async () => {
    const dynamodb = newClient();
    await dynamodb.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: { pk: { S: 'POLL#legacy#REGISTRY#0' }, sk: { S: 'CONTESTANT#z' }, contestant: { S: 'z' } },
      }),
    );
    const summary = await aggregateVotes({
      tableName: table.tableName,
      poll: 'legacy',
      shards: 3,
      registryPartitions: 1,
      dynamodb,
    });
    expect(summary).toMatchObject({ contestants: 1, shardsRead: 3 });
  });

  it('reports a corrupt layout item instead of trusting it', async () => {
    const dynamodb = newClient();
    await dynamodb.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: {
          pk: { S: 'POLL#corrupt#CONFIG' },
          sk: { S: 'CONFIG' },
          shards: { S: 'ten' },
          registryPartitions: { N: '4' },
        },
      }),
    );
    await expect(
      aggregateVotes({ tableName: table.tableName, poll: 'corrupt', dynamodb }),
    ).rejects.toMatchObject({ name: 'InvalidVoteOptionsError', option: 'shards' });
  });
});
