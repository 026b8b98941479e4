import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { VoteCounter } from '../../../src/votes/index.js';
import { localClients } from '../../support/aws.js';
import { createVotesTable, newClient } from '../votes/support.js';

describe('aggregate-votes Lambda handler', () => {
  let table: Awaited<ReturnType<typeof createVotesTable>>;
  beforeAll(async () => {
    table = await createVotesTable();
  });
  afterAll(() => table.drop());
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
    vi.resetModules();
  });

  it('reads its config from the environment, aggregates, and prints one EMF line', async () => {
    const writer = new VoteCounter({
      tableName: table.tableName,
      poll: 'tv',
      shards: 5,
      dynamodb: newClient(),
    });
    await writer.registry.register(['a', 'b']);
    await writer.castVote('a', 3);
    await writer.castVote('b');

    vi.stubEnv('TABLE_NAME', table.tableName);
    vi.stubEnv('POLL', 'tv');
    vi.stubEnv('SHARDS', '5');
    vi.stubEnv('CONCURRENCY', '2');
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', localClients().dynamoEndpoint);
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const { handler } = await import('../../../src/handlers/aggregate-votes.js');
    const summary = await handler();
    expect(summary).toMatchObject({ poll: 'tv', contestants: 2, shards: 5, totalsWritten: 2 });
    expect(await writer.getTotal('a', { consistentRead: true })).toBe(3n);

    const emf = lines.map((line) => JSON.parse(line)).find((line) => line._aws !== undefined);
    expect(emf).toMatchObject({ Poll: 'tv', Contestants: 2, TotalsWritten: 2, ShardsRead: 10 });
    expect(emf._aws.CloudWatchMetrics[0].Dimensions).toEqual([['Poll']]);
  });

  it('refuses to aggregate with the default shard count when the writers used another one', async () => {
    const writer = new VoteCounter({
      tableName: table.tableName,
      poll: 'radio',
      shards: 25,
      dynamodb: newClient(),
    });
    await writer.registry.register(['a']);
    for (let i = 0; i < 30; i++) await writer.castVote('a');

    // What serverless.yml used to deploy: TABLE_NAME and POLL only, so 10 shards of 25 summed.
    vi.stubEnv('TABLE_NAME', table.tableName);
    vi.stubEnv('POLL', 'radio');
    vi.stubEnv('SHARDS', '');
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', localClients().dynamoEndpoint);
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const { handler } = await import('../../../src/handlers/aggregate-votes.js');
    await expect(handler()).rejects.toMatchObject({ name: 'InvalidVoteOptionsError', option: 'shards' });
    expect(await writer.getTotal('a', { consistentRead: true })).toBe(0n);
  });

  it('fails at init when POLL is missing', async () => {
    vi.stubEnv('TABLE_NAME', table.tableName);
    vi.stubEnv('POLL', '');
    vi.stubEnv('SHARDS', '5');
    await expect(import('../../../src/handlers/aggregate-votes.js')).rejects.toMatchObject({
      name: 'InvalidVoteOptionsError',
      option: 'POLL',
    });
  });
});
