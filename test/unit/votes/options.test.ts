import { describe, expect, it } from 'vitest';
import { AGGREGATOR_ENV, aggregatorOptionsFromEnv } from '../../../src/votes/env-config.js';
import {
  aggregateVotes,
  InvalidVoteError,
  InvalidVoteOptionsError,
  shardsForPeak,
  VoteCounter,
} from '../../../src/votes/index.js';
import { defaultDynamoDbClient } from '../../../src/votes/options.js';

const base = { tableName: 't', poll: 'p', shards: 4 };

describe('votes options', () => {
  it('rejects an unknown option key by name', () => {
    expect(() => new VoteCounter({ ...base, shard: 3 } as never)).toThrow(InvalidVoteOptionsError);
    expect(() => new VoteCounter({ ...base, shard: 3 } as never)).toThrow(
      /VoteCounter: unknown option 'shard'/,
    );
  });

  it('aggregateVotes rejects an unknown key before any request', async () => {
    await expect(aggregateVotes({ ...base, concurency: 4 } as never)).rejects.toMatchObject({
      name: 'InvalidVoteOptionsError',
      option: 'concurency',
    });
  });

  it('aggregateVotes rejects a logger without info()', async () => {
    await expect(aggregateVotes({ ...base, logger: {} as never })).rejects.toMatchObject({
      option: 'logger',
    });
  });

  it('castVote, getTotal and registry.list reject unknown keys', async () => {
    const counter = new VoteCounter(base);
    await expect(counter.castVote('a', 1, { voter: 'x' } as never)).rejects.toThrow(InvalidVoteOptionsError);
    await expect(counter.getTotal('a', { consistent: true } as never)).rejects.toThrow(
      InvalidVoteOptionsError,
    );
    await expect(counter.registry.list({ limit: 3 } as never)).rejects.toThrow(InvalidVoteOptionsError);
  });

  it('takes at most one of shards and peakWritesPerSecond, 10 shards when neither is given', () => {
    expect(new VoteCounter({ tableName: 't', poll: 'p' }).shards).toBe(10);
    expect(() => new VoteCounter({ tableName: 't', poll: 'p', headroom: 2 })).toThrow(/headroom/);
    expect(() => new VoteCounter({ ...base, peakWritesPerSecond: 5000 })).toThrow(/either/);
    expect(
      new VoteCounter({ tableName: 't', poll: 'p', peakWritesPerSecond: 20_000, headroom: 1 }).shards,
    ).toBe(20);
  });

  it('derives shards from a peak rate: ceil(peak × headroom / 1,000)', () => {
    expect(shardsForPeak(20_000, 1)).toBe(20);
    expect(shardsForPeak(20_000)).toBe(25);
    expect(shardsForPeak(1)).toBe(1);
    expect(shardsForPeak(1_001, 1)).toBe(2);
    expect(() => shardsForPeak(0)).toThrow(InvalidVoteOptionsError);
    expect(() => shardsForPeak(1_000, 0.5)).toThrow(/headroom/);
    expect(() => shardsForPeak(10_000_000)).toThrow(/at most/);
  });

  it('rejects a poll id with the key separator and out-of-range numbers', () => {
    expect(() => new VoteCounter({ ...base, poll: 'a#b' })).toThrow(/`#`/);
    expect(() => new VoteCounter({ ...base, shards: 0 })).toThrow(InvalidVoteOptionsError);
    expect(() => new VoteCounter({ ...base, shards: 2.5 })).toThrow(InvalidVoteOptionsError);
    expect(() => new VoteCounter({ ...base, registryPartitions: 101 })).toThrow(/registryPartitions/);
    expect(() => new VoteCounter({ ...base, dynamodb: {} as never })).toThrow(/DynamoDBClient/);
  });

  it('accepts only letters, digits, `.`, `_` and `-` in a poll id: `*` and `?` are IAM wildcards', () => {
    for (const poll of ['*', '?', 'a*', 'final?', 'a b', 'a/b', 'é', 'a\nb']) {
      expect(() => new VoteCounter({ ...base, poll }), poll).toThrow(InvalidVoteOptionsError);
    }
    expect(() => new VoteCounter({ ...base, poll: '*' })).toThrow(/\^\[A-Za-z0-9\._-\]\+\$/);
    expect(new VoteCounter({ ...base, poll: 'Final_2026.round-1' }).shards).toBe(4);
    expect(() => new VoteCounter({ ...base, poll: 'x'.repeat(257) })).toThrow(/256/);
  });

  it('aggregateVotes refuses a wildcard poll id before any request', async () => {
    await expect(aggregateVotes({ ...base, poll: 'final*' })).rejects.toMatchObject({
      name: 'InvalidVoteOptionsError',
      option: 'poll',
    });
  });

  it('builds its own DynamoDB client with one attempt per request (withRetries does the retrying)', async () => {
    const client = defaultDynamoDbClient();
    expect(await client.config.maxAttempts()).toBe(1);
    client.destroy();
  });

  it('rejects vote counts that are not positive whole numbers, before any request', async () => {
    const counter = new VoteCounter(base);
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 53, 0n, -3n, 10n ** 38n, '1']) {
      await expect(counter.castVote('a', bad as never)).rejects.toThrow(InvalidVoteError);
    }
    await expect(counter.castVote('', 1)).rejects.toMatchObject({
      name: 'InvalidVoteError',
      field: 'contestant',
    });
    await expect(counter.castVote('a', 1, { voterId: '' })).rejects.toMatchObject({ field: 'voterId' });
  });
});

describe('aggregatorOptionsFromEnv', () => {
  it('turns the handler environment into options and leaves unset numbers to the defaults', () => {
    expect(
      aggregatorOptionsFromEnv({
        [AGGREGATOR_ENV.tableName]: 'votes',
        [AGGREGATOR_ENV.poll]: 'final',
        [AGGREGATOR_ENV.peakWritesPerSecond]: '20000',
        [AGGREGATOR_ENV.concurrency]: '16',
        UNRELATED: 'x',
      }),
    ).toEqual({ tableName: 'votes', poll: 'final', peakWritesPerSecond: 20_000, concurrency: 16 });
  });

  it('names the variable that is missing or not a number', () => {
    expect(() => aggregatorOptionsFromEnv({ POLL: 'p' })).toThrow(/TABLE_NAME/);
    expect(() => aggregatorOptionsFromEnv({ TABLE_NAME: 't' })).toThrow(/POLL/);
    expect(() => aggregatorOptionsFromEnv({ TABLE_NAME: 't', POLL: 'p', SHARDS: 'ten' })).toThrow(/SHARDS/);
  });

  it('fails at cold start on a POLL that would widen the IAM condition', () => {
    for (const poll of ['*', 'a?', 'a#b']) {
      expect(() => aggregatorOptionsFromEnv({ TABLE_NAME: 't', POLL: poll }), poll).toThrow(
        expect.objectContaining({ name: 'InvalidVoteOptionsError', option: 'POLL' }),
      );
    }
  });
});
