import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamPoller, type StreamsApi } from '../../../../src/local/emulator/poller.js';
import { capture } from '../../../../src/local/emulator/replay.js';

const streamArn = 'arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-01-01T00:00:00.000';

/**
 * One open shard as AWS may serve it: GetRecords pages `pages[i]` (sequence numbers; [] = an
 * empty page mid-shard), then empty pages forever. No endpoint to see: it counts as AWS.
 */
function awsLikeShard(pages: string[][]) {
  let getRecords = 0;
  const api: StreamsApi = {
    send: (async (command: { input: Record<string, unknown> }) => {
      if (command instanceof DescribeStreamCommand)
        return { StreamDescription: { StreamArn: streamArn, Shards: [{ ShardId: 'shardId-1' }] } };
      if (command instanceof GetShardIteratorCommand) return { ShardIterator: '0' };
      if (command instanceof GetRecordsCommand) {
        getRecords++;
        const at = Number(command.input.ShardIterator);
        const page = pages[at] ?? [];
        return {
          Records: page.map((seq) => ({
            eventID: `e${seq}`,
            eventName: 'INSERT',
            eventSource: 'aws:dynamodb',
            awsRegion: 'us-east-1',
            dynamodb: {
              Keys: { pk: { S: seq } },
              SequenceNumber: seq,
              SizeBytes: 10,
              StreamViewType: 'KEYS_ONLY',
              ApproximateCreationDateTime: new Date(1_767_225_600_000),
            },
          })),
          NextShardIterator: String(at + 1),
        };
      }
      throw new Error(`unexpected ${command.constructor.name}`);
    }) as StreamsApi['send'],
  };
  return { api, getRecords: () => getRecords };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidewater-capture-stop-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('stopping once caught up', () => {
  it('a capture from AWS reads past empty pages in the middle of a shard', async () => {
    const shard = awsLikeShard([[], [], ['100', '101'], [], ['102']]);
    const file = join(dir, 'aws.jsonl');
    const result = await capture({ streams: shard.api, streamArn, file, pollIntervalMs: 0 });
    expect(result.records).toBe(3);
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).dynamodb.SequenceNumber)).toEqual(['100', '101', '102']);
    // Then 10 empty pages in a row: 5 pages of data and gaps, 10 to conclude.
    expect(shard.getRecords()).toBe(15);
  });

  it('the poller stops after emptyPagesToStop empty pages in a row, counting from the last record', async () => {
    const shard = awsLikeShard([[], ['100'], [], [], ['101']]);
    const seen: string[] = [];
    await new StreamPoller({ streams: shard.api, streamArn, pollIntervalMs: 0 }).run(
      async (s) => {
        for await (const page of s.pages) seen.push(...page.map((r) => r.dynamodb.SequenceNumber));
      },
      { stopWhenCaughtUp: true, emptyPagesToStop: 3 },
    );
    expect(seen).toEqual(['100', '101']);
    expect(shard.getRecords()).toBe(8);
  });

  it('keeps the fast stop where an empty page does mean caught up (DynamoDB Local), or when asked', async () => {
    const shard = awsLikeShard([[], ['100']]);
    const result = await capture({
      streams: shard.api,
      streamArn,
      file: join(dir, 'fast.jsonl'),
      emptyPagesToStop: 1,
    });
    expect(result.records).toBe(0);
    expect(shard.getRecords()).toBe(1);
    await expect(
      new StreamPoller({ streams: shard.api, streamArn }).run(async () => undefined, {
        stopWhenCaughtUp: true,
        emptyPagesToStop: 0,
      }),
    ).rejects.toThrow(/emptyPagesToStop/);
  });
});
