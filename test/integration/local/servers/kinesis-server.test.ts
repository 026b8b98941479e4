import { request } from 'node:http';
import {
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListShardsCommand,
  PutRecordCommand,
  PutRecordsCommand,
} from '@aws-sdk/client-kinesis';
import { afterAll, describe, expect, it } from 'vitest';
import { localKinesisClient, startKinesisServer } from '../../../../src/local/servers/kinesis-server.js';
import { createTestKinesisStream, localKinesis } from '../../../support/aws.js';

/** Whether anything answers HTTP at the address. */
function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host, port, method: 'POST', path: '/', timeout: 2000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

describe('the local Kinesis server (kinesalite)', () => {
  const kinesis = localKinesis();
  afterAll(() => kinesis.destroy());

  it('creates a stream ACTIVE at once and lists its shards (ListShards, DescribeStream)', async () => {
    const { streamName, streamArn } = await createTestKinesisStream(kinesis, 3);
    expect(streamArn).toBe(`arn:aws:kinesis:us-east-1:000000000000:stream/${streamName}`);
    const described = await kinesis.send(new DescribeStreamCommand({ StreamName: streamName }));
    expect(described.StreamDescription?.StreamStatus).toBe('ACTIVE');
    const listed = await kinesis.send(new ListShardsCommand({ StreamName: streamName }));
    expect(listed.Shards?.map((s) => s.ShardId)).toEqual(
      described.StreamDescription?.Shards?.map((s) => s.ShardId),
    );
    expect(listed.Shards).toHaveLength(3);
  });

  it('PutRecord and PutRecords land on the shard of the partition key, read back in order with GetShardIterator / GetRecords', async () => {
    const { streamName } = await createTestKinesisStream(kinesis, 2);
    const one = await kinesis.send(
      new PutRecordCommand({ StreamName: streamName, PartitionKey: 'item-a', Data: Buffer.from('{"n":1}') }),
    );
    const many = await kinesis.send(
      new PutRecordsCommand({
        StreamName: streamName,
        Records: [2, 3, 4].map((n) => ({ PartitionKey: 'item-a', Data: Buffer.from(`{"n":${n}}`) })),
      }),
    );
    expect(many.FailedRecordCount).toBe(0);
    // One partition key, one shard (Kinesis hashes the key with MD5 into the shards' ranges).
    expect(new Set(many.Records?.map((r) => r.ShardId))).toEqual(new Set([one.ShardId]));
    const iterator = await kinesis.send(
      new GetShardIteratorCommand({
        StreamName: streamName,
        ShardId: one.ShardId as string,
        ShardIteratorType: 'TRIM_HORIZON',
      }),
    );
    const page = await kinesis.send(
      new GetRecordsCommand({ ShardIterator: iterator.ShardIterator as string }),
    );
    const got = page.Records ?? [];
    expect(got.map((r) => Buffer.from(r.Data ?? []).toString())).toEqual(
      [1, 2, 3, 4].map((n) => `{"n":${n}}`),
    );
    const sequence = got.map((r) => BigInt(r.SequenceNumber as string));
    expect(sequence.every((s, i) => i === 0 || s > (sequence[i - 1] as bigint))).toBe(true);
    expect(got[0]?.SequenceNumber).toBe(one.SequenceNumber);
    expect(got.every((r) => r.ApproximateArrivalTimestamp instanceof Date)).toBe(true);
    expect(page.MillisBehindLatest).toBe(0);
  });

  it('listens on 127.0.0.1 only, on a free port, and stop() frees it even with clients connected', async () => {
    const server = await startKinesisServer();
    expect(server.endpoint).toBe(`http://127.0.0.1:${server.port}`);
    const client = localKinesisClient(server.endpoint);
    await createTestKinesisStream(client);
    expect(await answers('127.0.0.1', server.port)).toBe(true);
    const external = Object.values(await import('node:os').then((os) => os.networkInterfaces()))
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    if (external !== undefined) expect(await answers(external, server.port)).toBe(false);
    await server.stop();
    expect(await answers('127.0.0.1', server.port)).toBe(false);
    client.destroy();
  });
});
