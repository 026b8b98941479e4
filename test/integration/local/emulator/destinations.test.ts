import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { S3FailureDestination, SqsFailureDestination } from '../../../../src/local/emulator/destinations.js';
import { EventSourceMappingEmulator } from '../../../../src/local/emulator/emulator.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import { createTestBucket, localClients, startLocalSqs } from '../../../support/aws.js';

const { s3 } = localClients();

describe('S3FailureDestination', () => {
  it('writes the invocation record of an exhausted batch to the bucket', async () => {
    const bucket = await createTestBucket(s3);
    const builder = new StreamEventBuilder();
    const records = [builder.insert({ pk: 'a' }), builder.insert({ pk: 'b' })];
    const emulator = new EventSourceMappingEmulator({
      maximumRetryAttempts: 0,
      onFailure: new S3FailureDestination(s3, bucket, {
        eventSourceMappingUuid: 'a1b2c3d4-0000-4000-8000-000000000001',
      }),
      handler: async () => {
        throw new Error('always');
      },
    });
    await emulator.runShard({ shardId: 'shardId-9', streamArn: builder.streamArn, pages: [records] });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.Contents).toHaveLength(1);
    const key = listed.Contents?.[0]?.Key as string;
    // aws/lambda/<ESM-UUID>/<shardID>/YYYY/MM/DD/YYYY-MM-DDTHH.MM.SS-<random UUID>, as Lambda names it.
    const match = key.match(
      /^aws\/lambda\/a1b2c3d4-0000-4000-8000-000000000001\/shardId-9\/(\d{4})\/(\d{2})\/(\d{2})\/(\d{4})-(\d{2})-(\d{2})T\d{2}\.\d{2}\.\d{2}-[0-9a-f-]{36}$/,
    );
    expect(match).not.toBeNull();
    expect(match?.slice(1, 4)).toEqual(match?.slice(4, 7));
    const body = JSON.parse(
      (await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body?.transformToString()) ??
        '',
    );
    expect(body.requestContext).toMatchObject({
      condition: 'RetryAttemptsExhausted',
      approximateInvokeCount: 1,
    });
    expect(body.DDBStreamBatchInfo).toMatchObject({
      shardId: 'shardId-9',
      batchSize: 2,
      startSequenceNumber: records[0]?.dynamodb.SequenceNumber,
      endSequenceNumber: records[1]?.dynamodb.SequenceNumber,
      streamArn: builder.streamArn,
    });
    expect(key.slice(key.indexOf('shardId-9/') + 10, key.indexOf('shardId-9/') + 20)).toBe(
      body.timestamp.slice(0, 10).replaceAll('-', '/'),
    );
    // Unlike SQS and SNS, an S3 destination holds the discarded records themselves: "the payload
    // field contains the original invocation record as an escaped JSON string" (Lambda developer
    // guide, "Error handling for DynamoDB event sources", example Amazon S3 invocation record).
    expect(typeof body.payload).toBe('string');
    expect(JSON.parse(body.payload)).toEqual({ Records: JSON.parse(JSON.stringify(records)) });
  });
});

describe('SqsFailureDestination', () => {
  it('sends the invocation record of records that aged out to the queue', async () => {
    const { sqs, stop } = await startLocalSqs();
    try {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'on-failure' }));
      const builder = new StreamEventBuilder({ now: 1_000 });
      const old = builder.insert({ pk: 'old' });
      let calls = 0;
      const emulator = new EventSourceMappingEmulator({
        maximumRecordAgeInSeconds: 60,
        onFailure: new SqsFailureDestination(sqs, QueueUrl as string),
        handler: async () => {
          calls++;
        },
      });
      await emulator.runShard({ shardId: 'shardId-3', streamArn: builder.streamArn, pages: [[old]] });
      expect(calls).toBe(0);
      const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));
      expect(received.Messages).toHaveLength(1);
      const body = JSON.parse(received.Messages?.[0]?.Body ?? '');
      expect(body.requestContext).toMatchObject({
        condition: 'RecordAgeExceeded',
        approximateInvokeCount: 0,
      });
      expect(body.responseContext).toBeUndefined();
      expect(body.DDBStreamBatchInfo).toMatchObject({
        shardId: 'shardId-3',
        batchSize: 1,
        approximateArrivalOfFirstRecord: '1970-01-01T00:16:40Z',
      });
    } finally {
      await stop();
    }
  });
});
