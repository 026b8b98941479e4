import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestBucket, createTestTable, localClients } from '../../../support/aws.js';

describe('local servers from the global setup', () => {
  const clients = localClients();
  afterAll(() => {
    clients.dynamodb.destroy();
    clients.s3.destroy();
  });

  it('DynamoDB Local answers and makes tables with streams', async () => {
    const table = await createTestTable(clients.dynamodb, { ttlAttribute: 'expiresAt' });
    const tables = await clients.dynamodb.send(new ListTablesCommand({}));
    expect(tables.TableNames).toContain(table.tableName);
    expect(table.streamArn).toMatch(/^arn:aws:dynamodb:.*:table\/.+\/stream\//);
    await table.drop();
  });

  it('the S3 server stores and returns objects byte for byte', async () => {
    const bucket = await createTestBucket(clients.s3);
    const body = new Uint8Array([0, 1, 2, 250, 255]);
    await clients.s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'a/b.bin', Body: body, StorageClass: 'GLACIER_IR' }),
    );
    const got = await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'a/b.bin' }));
    expect(got.StorageClass).toBe('GLACIER_IR');
    expect(await got.Body?.transformToByteArray()).toEqual(body);
  });
});
