/**
 * Replay speed: records per second from a DynamoDB Local stream, through the stream poller and
 * the event source mapping emulator (batching, checkpointing, the Lambda event shape), into a
 * handler that only counts. The peer is the bare read: the same GetRecords loop handing SDK
 * records to nobody, so the ratio is what the emulator costs on top of reading the stream.
 * A third row replays the same records from a captured JSONL file (no server in the loop).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchWriteItemCommand, CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { EventSourceMappingEmulator } from '../../src/local/emulator/emulator.js';
import { StreamPoller } from '../../src/local/emulator/poller.js';
import { capture, replay } from '../../src/local/emulator/replay.js';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  startDynamoDbLocal,
} from '../../src/local/servers/dynamodb-local.js';
import { goal, int, ratio, table } from '../lib/markdown.js';

const GOAL_RECORDS_PER_SECOND = 5_000;

async function writeItems(dynamodb: DynamoDBClient, tableName: string, count: number): Promise<void> {
  const payload = 'x'.repeat(200);
  for (let start = 0; start < count; start += 25) {
    const requests = [];
    for (let i = start; i < Math.min(count, start + 25); i++) {
      requests.push({
        PutRequest: {
          Item: {
            pk: { S: `item-${i}` },
            n: { N: String(i) },
            payload: { S: payload },
            expiresAt: { N: '1767225600' },
          },
        },
      });
    }
    await dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [tableName]: requests } }));
  }
}

async function bareRead(streams: DynamoDBStreamsClient, streamArn: string): Promise<number> {
  const description = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
  let count = 0;
  for (const shard of description.StreamDescription?.Shards ?? []) {
    let iterator = (
      await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shard.ShardId,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      )
    ).ShardIterator;
    while (iterator) {
      const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
      const n = page.Records?.length ?? 0;
      count += n;
      iterator = n === 0 ? undefined : page.NextShardIterator;
    }
  }
  return count;
}

export default {
  name: 'replay',
  title: 'Local replay speed',
  async run({
    quick,
    log,
  }: {
    quick: boolean;
    log: (m: string) => void;
  }): Promise<{ markdown: string; data: unknown }> {
    const count = quick ? 3_000 : 20_000;
    const rounds = quick ? 2 : 5;
    // DynamoDB Local's JVM needs a few full reads before GetRecords settles (first reads are 5–10× slower).
    const warmups = quick ? 1 : 3;
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-bench-replay-'));
    log('starting DynamoDB Local');
    const server = await startDynamoDbLocal();
    const config = { endpoint: server.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    const dynamodb = new DynamoDBClient(config);
    const streams = new DynamoDBStreamsClient(config);
    try {
      const created = await dynamodb.send(
        new CreateTableCommand({
          TableName: 'bench-replay',
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
        }),
      );
      const streamArn = created.TableDescription?.LatestStreamArn as string;
      log(`writing ${count} items`);
      await writeItems(dynamodb, 'bench-replay', count);

      for (let i = 0; i < warmups; i++) {
        log(`warm-up read ${i + 1}/${warmups}`);
        await bareRead(streams, streamArn);
      }
      const best = { bare: 0, emulator: 0, file: 0 };
      const file = join(dir, 'stream.jsonl');
      for (let round = 0; round < rounds; round++) {
        let t = performance.now();
        const bare = await bareRead(streams, streamArn);
        best.bare = Math.max(best.bare, bare / ((performance.now() - t) / 1000));

        let handled = 0;
        const emulator = new EventSourceMappingEmulator({
          batchSize: 100,
          keepLog: false,
          handler: async (event) => {
            handled += event.Records.length;
          },
        });
        t = performance.now();
        await new StreamPoller({ streams, streamArn, pollIntervalMs: 10 }).runEmulator(emulator, {
          stopWhenCaughtUp: true,
        });
        best.emulator = Math.max(best.emulator, handled / ((performance.now() - t) / 1000));
        if (handled !== count || bare !== count)
          throw new Error(`read ${bare} / handled ${handled} of ${count} records`);

        if (round === 0) await capture({ streams, streamArn, file });
        let replayed = 0;
        t = performance.now();
        await replay({
          files: file,
          mapping: {
            batchSize: 100,
            keepLog: false,
            handler: async (event) => {
              replayed += event.Records.length;
            },
          },
        });
        best.file = Math.max(best.file, replayed / ((performance.now() - t) / 1000));
        log(
          `round ${round + 1}/${rounds}: bare ${int(best.bare)}/s, emulator ${int(best.emulator)}/s, file ${int(best.file)}/s`,
        );
      }
      const markdown = [
        `${int(count)} items (≈300 B each) written to a DynamoDB Local table with a NEW_AND_OLD_IMAGES stream, then read back from TRIM_HORIZON after ${warmups} untimed warm-up read(s) of DynamoDB Local; best of ${rounds} rounds. Handlers only count records; BatchSize 100.`,
        '',
        table(
          ['path', 'records/s', 'vs bare GetRecords'],
          [
            ['bare GetRecords loop (peer: no conversion, no batching)', int(best.bare), ratio(1)],
            [
              'StreamPoller → EventSourceMappingEmulator → handler',
              int(best.emulator),
              ratio(best.emulator / best.bare),
            ],
            [
              'replay() of the captured JSONL → emulator → handler',
              int(best.file),
              ratio(best.file / best.bare),
            ],
          ],
          ['left', 'right', 'right'],
        ),
        '',
        goal(
          'replay from a DynamoDB Local stream through the emulator',
          best.emulator,
          GOAL_RECORDS_PER_SECOND,
          true,
          (n) => `${int(n)} records/s`,
        ),
      ].join('\n');
      return { markdown, data: { count, rounds, recordsPerSecond: best } };
    } finally {
      dynamodb.destroy();
      streams.destroy();
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
