import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { captureKinesis } from '../../../../src/local/emulator/kinesis-capture.js';
import { replayKinesis } from '../../../../src/local/emulator/kinesis-replay.js';
import { createStreamHandler, kinesisSource } from '../../../../src/pipeline/index.js';
import type { ClassifiedRecord } from '../../../../src/records/types.js';
import { MemorySink } from '../../../../src/sinks/memory-sink.js';
import { createTestKinesisStream, createTestTable } from '../../../support/aws.js';
import { bridgeTableToKinesis, kinesisTestClients } from '../../../support/kinesis-bridge.js';

const { dynamodb, streams, kinesis } = kinesisTestClients();

const ITEMS = 12;

describe('captureKinesis: a Kinesis stream to a file replayKinesis reads', () => {
  it('captures every shard’s records in order, owner-only, and a replay of the file delivers each change once', async () => {
    const table = await createTestTable(dynamodb);
    for (let i = 0; i < ITEMS; i++)
      for (const n of ['1', '2'])
        await dynamodb.send(
          new PutItemCommand({ TableName: table.tableName, Item: { pk: { S: `item-${i}` }, n: { N: n } } }),
        );
    const stream = await createTestKinesisStream(kinesis, 2);
    await bridgeTableToKinesis({ streams, kinesis }, table, stream.streamArn);

    const file = join(await mkdtemp(join(tmpdir(), 'tidewater-kinesis-capture-')), 'changes.jsonl');
    const counts: number[] = [];
    const result = await captureKinesis({
      kinesis,
      streamArn: stream.streamArn,
      file,
      pollIntervalMs: 10,
      onRecord: (count) => counts.push(count),
    });
    expect(result).toEqual({ records: ITEMS * 2, file });
    expect(counts.at(-1)).toBe(ITEMS * 2);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    const lines = (await readFile(file, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(ITEMS * 2);
    // Each shard's records in sequence-number order, as the shard holds them.
    const byShard = new Map<string, bigint[]>();
    for (const line of lines) {
      expect(line).toMatchObject({ eventSource: 'aws:kinesis', eventSourceARN: stream.streamArn });
      const shardId = line.eventID.slice(0, line.eventID.lastIndexOf(':'));
      byShard.set(shardId, [...(byShard.get(shardId) ?? []), BigInt(line.kinesis.sequenceNumber)]);
    }
    expect(byShard.size).toBe(2);
    for (const sequence of byShard.values())
      expect(sequence).toEqual([...sequence].sort((a, b) => (a < b ? -1 : 1)));

    const inserts = new MemorySink<ClassifiedRecord>();
    const modifies = new MemorySink<ClassifiedRecord>();
    const handler = createStreamHandler({
      source: kinesisSource(),
      routes: [
        { when: 'insert', to: inserts },
        { when: 'modify', to: modifies },
      ],
      metrics: false,
    });
    const replayed = await replayKinesis({ files: file, mapping: { handler, batchSize: 100 } });
    expect(replayed.records).toBe(ITEMS * 2);
    expect(inserts.records.map((r) => r.keys.pk).sort()).toEqual(
      Array.from({ length: ITEMS }, (_, i) => `item-${i}`).sort(),
    );
    expect(modifies.records.map((r) => r.newImage?.n)).toEqual(Array(ITEMS).fill(2));
    await table.drop();
  });

  it('a stream that is not a Kinesis ARN is refused before anything is written', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'tidewater-kinesis-capture-')), 'x.jsonl');
    await expect(
      captureKinesis({
        kinesis,
        streamArn: 'arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/x',
        file,
      }),
    ).rejects.toThrow(/captureKinesis: option 'streamArn' must be a Kinesis stream ARN/);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });
});
