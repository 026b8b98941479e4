import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { S3FailureDestination } from '../../../src/local/destinations.js';
import { EventSourceMappingEmulator } from '../../../src/local/emulator.js';
import { StreamEventBuilder } from '../../../src/local/events.js';
import { createTestBucket, localClients } from '../../support/aws.js';

const { s3 } = localClients();

describe('S3FailureDestination', () => {
  it('writes the invocation record of an exhausted batch to the bucket', async () => {
    const bucket = await createTestBucket(s3);
    const builder = new StreamEventBuilder();
    const records = [builder.insert({ pk: 'a' }), builder.insert({ pk: 'b' })];
    const emulator = new EventSourceMappingEmulator({
      maximumRetryAttempts: 0,
      onFailure: new S3FailureDestination(s3, bucket),
      handler: async () => {
        throw new Error('always');
      },
    });
    await emulator.runShard({ shardId: 'shardId-9', streamArn: builder.streamArn, pages: [records] });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.Contents).toHaveLength(1);
    const key = listed.Contents?.[0]?.Key as string;
    expect(key).toMatch(/^aws\/lambda\/esm-failures\/\d{4}\/\d{2}\/\d{2}\/shardId-9-/);
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
  });
});
