import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MemoryFailureDestination,
  S3FailureDestination,
  SqsFailureDestination,
} from '../../../src/local/emulator/destinations.js';
import type { StreamInvocationRecord } from '../../../src/records/index.js';
import {
  handlerTarget,
  type RedriveMessageError,
  redrive,
  StreamRangeExpiredError,
} from '../../../src/redrive/index.js';
import { createTestBucket, createTestTable, localClients, startLocalSqs } from '../../support/aws.js';
import { fanOut, putItems, runMapping, type StateSink, sinkHandler, tableState } from './support.js';

const { dynamodb, streams, s3 } = localClients();
let local: Awaited<ReturnType<typeof startLocalSqs>>;

beforeAll(async () => {
  local = await startLocalSqs();
});
afterAll(async () => {
  await local.stop();
});

async function queue(name: string): Promise<string> {
  const { QueueUrl } = await local.sqs.send(new CreateQueueCommand({ QueueName: name }));
  return QueueUrl as string;
}

/** A table whose batch failed past its retries: the sink holds what the broken handler wrote before failing. */
async function failedBatch(pks: string[], failAt: string) {
  const table = await createTestTable(dynamodb);
  await putItems(table.tableName, pks);
  const queueName = `on-failure-${table.tableName}`;
  const queueUrl = await queue(queueName);
  const bucket = await createTestBucket(s3);
  const memory = new MemoryFailureDestination();
  const sink: StateSink = new Map();
  await runMapping(
    table.streamArn,
    sinkHandler(sink, { failAt: new Set([failAt]) }),
    fanOut(memory, new SqsFailureDestination(local.sqs, queueUrl), new S3FailureDestination(s3, bucket)),
  );
  expect(memory.records).toHaveLength(1);
  return { table, queueName, queueUrl, bucket, sink, record: memory.records[0] as StreamInvocationRecord };
}

const common = () => ({ streams, sqs: local.sqs, s3, waitTimeSeconds: 0 });

describe('redrive on DynamoDB Local, the local SQS server and the S3 server', () => {
  it('dry run, then the fixed handler: the sink ends exact and the message and object are removed', async () => {
    const { table, queueName, queueUrl, bucket, sink, record } = await failedBatch(['a', 'b', 'c'], 'b');
    expect(record.DDBStreamBatchInfo.batchSize).toBe(3);
    expect([...sink.keys()]).toEqual(['a']);

    const dry = await redrive({
      ...common(),
      streamArn: table.streamArn,
      queueUrl,
      target: handlerTarget(async () => {
        throw new Error('a dry run invokes nothing');
      }),
      dryRun: true,
    });
    expect(dry).toMatchObject({
      dryRun: true,
      messagesRead: 1,
      recordsRedriven: 3,
      succeeded: 0,
      messagesRemoved: 0,
    });
    expect(dry.items[0]).toMatchObject({
      kind: 'on-failure',
      shardId: record.DDBStreamBatchInfo.shardId,
      startSequenceNumber: record.DDBStreamBatchInfo.startSequenceNumber,
      endSequenceNumber: record.DDBStreamBatchInfo.endSequenceNumber,
    });
    expect(local.server.messages(queueName)).toHaveLength(1);

    const fixed = sinkHandler(sink);
    const report = await redrive({
      ...common(),
      streamArn: table.streamArn,
      queueUrl,
      target: handlerTarget(fixed),
    });
    expect(report).toMatchObject({
      messagesRead: 1,
      recordsRedriven: 3,
      succeeded: 3,
      failed: 0,
      messagesRemoved: 1,
    });
    expect(local.server.messages(queueName)).toHaveLength(0);
    expect(sink).toEqual(await tableState(table.tableName));

    // The S3 copy holds the batch itself: redriven without the stream, then deleted.
    const fromS3 = await redrive({
      ...common(),
      streamArn: table.streamArn,
      bucket,
      prefix: 'aws/lambda/',
      target: handlerTarget(fixed),
    });
    expect(fromS3).toMatchObject({ messagesRead: 1, succeeded: 3, messagesRemoved: 1 });
    expect((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).toEqual([]);
    expect(sink).toEqual(await tableState(table.tableName));
  });

  it('a partial failure keeps the message and names the failed sequence numbers', async () => {
    const { table, queueName, queueUrl, sink, record } = await failedBatch(['p', 'q', 'r'], 'p');
    const report = await redrive({
      ...common(),
      streamArn: table.streamArn,
      queueUrl,
      target: handlerTarget(sinkHandler(sink, { failAt: new Set(['q']), report: true })),
    });
    expect(report).toMatchObject({ messagesRead: 1, succeeded: 1, failed: 2, messagesRemoved: 0 });
    expect(report.failures).toHaveLength(1);
    const failed = report.failures[0]?.sequenceNumbers ?? [];
    expect(failed).toHaveLength(2);
    expect(failed[1]).toBe(record.DDBStreamBatchInfo.endSequenceNumber);
    // Kept and released: visible again for the next run.
    expect(local.server.messages(queueName)).toHaveLength(1);
    const again = await redrive({
      ...common(),
      streamArn: table.streamArn,
      queueUrl,
      target: handlerTarget(sinkHandler(sink)),
    });
    expect(again).toMatchObject({ messagesRead: 1, succeeded: 3, messagesRemoved: 1 });
    expect(sink).toEqual(await tableState(table.tableName));
  });

  it('reports a range the stream no longer holds and how to recover it, and keeps the message', async () => {
    const { table, queueName, queueUrl, record } = await failedBatch(['x'], 'x');
    const info = record.DDBStreamBatchInfo;
    const goneShard = {
      ...record,
      DDBStreamBatchInfo: { ...info, shardId: 'shardId-00000000000000000000-00000000' },
    };
    await local.sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(goneShard) }),
    );
    const report = await redrive({
      ...common(),
      streamArn: table.streamArn,
      queueUrl,
      target: handlerTarget(async () => ({ batchItemFailures: [] })),
    });
    expect(report.messagesRead).toBe(2);
    expect(report.messagesRemoved).toBe(1);
    expect(report.rangesExpired).toHaveLength(1);
    const expired = report.rangesExpired[0] as StreamRangeExpiredError;
    expect(expired).toBeInstanceOf(StreamRangeExpiredError);
    expect(expired.shardId).toBe('shardId-00000000000000000000-00000000');
    expect(expired.message).toContain('tidewater backfill');
    expect(expired.message).toContain('readArchive');
    expect(local.server.messages(queueName)).toHaveLength(1);
  });

  it('refuses another stream, a malformed message and an unknown version by message id; the rest is redriven', async () => {
    const { table, queueName, queueUrl, sink, record } = await failedBatch(['m', 'n'], 'm');
    const other = {
      ...record,
      DDBStreamBatchInfo: { ...record.DDBStreamBatchInfo, streamArn: `${table.streamArn}-other` },
    };
    const bodies = [
      JSON.stringify(other),
      '{"DDBStreamBatchInfo": tru',
      JSON.stringify({ ...record, version: '2.0' }),
    ];
    const ids: string[] = [];
    for (const body of bodies) {
      const sent = await local.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
      ids.push(sent.MessageId as string);
    }
    // An SNS subscription without raw delivery: the record inside a notification.
    await local.sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify({
          Type: 'Notification',
          MessageId: 'sns-1',
          Message: JSON.stringify(record),
        }),
      }),
    );
    const report = await redrive({
      ...common(),
      streamArn: table.streamArn,
      queueUrl,
      target: handlerTarget(sinkHandler(sink)),
    });
    expect(report).toMatchObject({ messagesRead: 5, messagesRemoved: 2, succeeded: 4, failed: 0 });
    expect(
      report.errors.map((e) => [(e as RedriveMessageError).problem, (e as RedriveMessageError).source]),
    ).toEqual([
      ['other-stream', `sqs:${ids[0]}`],
      ['malformed', `sqs:${ids[1]}`],
      ['unknown-version', `sqs:${ids[2]}`],
    ]);
    expect(local.server.messages(queueName)).toHaveLength(3);
    expect(sink).toEqual(await tableState(table.tableName));
  });

  it('an S3 object that is not JSON is reported by key and left', async () => {
    const table = await createTestTable(dynamodb);
    const bucket = await createTestBucket(s3);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'aws/lambda/x/broken', Body: 'not json' }));
    const report = await redrive({
      ...common(),
      streamArn: table.streamArn,
      bucket,
      target: handlerTarget(async () => undefined),
    });
    expect(report.errors[0]).toMatchObject({
      problem: 'malformed',
      source: `s3://${bucket}/aws/lambda/x/broken`,
    });
    expect((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents).toHaveLength(1);
  });
});
