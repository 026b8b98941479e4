import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import { replay } from '../../../../src/local/emulator/replay.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidewater-replay-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function jsonl(name: string, lines: unknown[]): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  return file;
}

describe('replay', () => {
  it('replays Lambda events through the mapping, re-batching by BatchSize', async () => {
    const builder = new StreamEventBuilder();
    const file = await jsonl('events.jsonl', [
      builder.event(builder.insert({ pk: 'a' }), builder.insert({ pk: 'b' })),
      builder.event(builder.modify({ pk: 'a', v: 1 }, { pk: 'a', v: 2 }), builder.userDelete({ pk: 'b' })),
    ]);
    const sizes: number[] = [];
    const progress: number[] = [];
    const result = await replay({
      files: file,
      mapping: {
        batchSize: 3,
        maximumBatchingWindowInSeconds: 1,
        handler: async (event) => {
          sizes.push(event.Records.length);
        },
      },
      onProgress: (p) => progress.push(p.handled),
    });
    expect(result.records).toBe(4);
    expect(sizes).toEqual([3, 1]);
    expect(progress.at(-1)).toBe(4);
    expect(result.shards[0]?.shardId).toBe('shardId-replay-00000000');
  });

  it('replays captured GetRecords records per shard, in the Lambda shape', async () => {
    const streamArn = 'arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/2026-01-01T00:00:00.000';
    const line = (shardId: string, seq: string, pk: string, ttl = false) => ({
      shardId,
      streamArn,
      eventID: `e-${seq}`,
      eventName: ttl ? 'REMOVE' : 'INSERT',
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'ddblocal',
      dynamodb: {
        ApproximateCreationDateTime: '2026-01-01T00:00:00.000Z',
        Keys: { pk: { S: pk } },
        SequenceNumber: seq,
        SizeBytes: 10,
        StreamViewType: 'KEYS_ONLY',
      },
      ...(ttl ? { userIdentity: { PrincipalId: 'dynamodb.amazonaws.com', Type: 'Service' } } : {}),
    });
    const file = await jsonl('captured.jsonl', [
      line('shard-1', '000000000000000000001', 'a'),
      line('shard-2', '000000000000000000005', 'x'),
      line('shard-1', '000000000000000000002', 'b', true),
    ]);
    const seen: Array<{ shard: string; pk: string; identity: unknown; created: unknown; arn: unknown }> = [];
    const result = await replay({
      files: file,
      mapping: {
        handler: async (event) => {
          for (const r of event.Records) {
            seen.push({
              shard: r.eventSourceARN === streamArn ? 'ok' : 'bad',
              pk: r.dynamodb.Keys.pk?.S as string,
              identity: r.userIdentity,
              created: r.dynamodb.ApproximateCreationDateTime,
              arn: r.eventSourceARN,
            });
          }
        },
      },
    });
    expect(seen.map((s) => s.pk)).toEqual(['a', 'b', 'x']);
    expect(seen[1]?.identity).toEqual({ type: 'Service', principalId: 'dynamodb.amazonaws.com' });
    expect(seen[0]?.created).toBe(1_767_225_600);
    expect(result.shards.map((s) => [s.shardId, s.checkpoint])).toEqual([
      ['shard-1', '000000000000000000002'],
      ['shard-2', '000000000000000000005'],
    ]);
  });

  it('is deterministic: record age is judged against the data, not the wall clock', async () => {
    const builder = new StreamEventBuilder({ now: 1_000_000 });
    const old = builder.insert({ pk: 'old' });
    const fresh = new StreamEventBuilder({
      now: 1_000_000 + 3600,
      firstSequenceNumber: 200000000000000000000n,
    }).insert({ pk: 'new' });
    const file = await jsonl('aged.jsonl', [builder.event(old, fresh)]);
    const run = async () => {
      const delivered: string[] = [];
      const result = await replay({
        files: file,
        mapping: {
          maximumRecordAgeInSeconds: 60,
          handler: async (event) => {
            delivered.push(...event.Records.map((r) => r.dynamodb.Keys.pk?.S as string));
          },
        },
      });
      return { delivered, discards: result.emulator.log.filter((e) => e.type === 'discard').length };
    };
    const first = await run();
    expect(first).toEqual({ delivered: ['new'], discards: 1 });
    expect(await run()).toEqual(first);
  });

  it('names the file and line of a bad line', async () => {
    const file = await jsonl('bad.jsonl', [
      { Records: [] },
      { eventID: 'x', eventName: 'INSERT', dynamodb: { Keys: {} } },
    ]);
    await expect(replay({ files: file, mapping: { handler: async () => undefined } })).rejects.toMatchObject({
      name: 'ReplayFileError',
      line: 2,
    });
    const notJson = join(dir, 'not-json.jsonl');
    await writeFile(notJson, '{"Records": []}\n{oops\n');
    await expect(replay({ files: notJson, mapping: { handler: async () => undefined } })).rejects.toThrow(
      /not-json.jsonl:2: not JSON/,
    );
  });
});
