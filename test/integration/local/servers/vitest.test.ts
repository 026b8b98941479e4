import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { useLocalAws } from '../../../../src/local/servers/vitest.js';

const aws = useLocalAws();

describe('startLocalAws / useLocalAws', () => {
  it('gives working clients and an env that SDK clients built elsewhere pick up', async () => {
    const local = aws.current;
    expect(local.env.AWS_ENDPOINT_URL_DYNAMODB).toBe(local.dynamoEndpoint);
    expect(local.env.AWS_ENDPOINT_URL_DYNAMODB_STREAMS).toBe(local.dynamoEndpoint);
    expect(process.env.AWS_ENDPOINT_URL_S3).toBe(local.s3Endpoint);
    const tables = await local.dynamodb.send(new ListTablesCommand({}));
    expect(tables.TableNames).toEqual([]);
    await local.s3.send(new CreateBucketCommand({ Bucket: 'use-local-aws' }));
    // A client configured only by the environment, as a handler would build one.
    const fromEnv = new S3Client({ forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' });
    await fromEnv.send(new PutObjectCommand({ Bucket: 'use-local-aws', Key: 'k', Body: 'hello' }));
    const object = await local.s3.send(new GetObjectCommand({ Bucket: 'use-local-aws', Key: 'k' }));
    expect(await object.Body?.transformToString()).toBe('hello');
    fromEnv.destroy();
  });
});
