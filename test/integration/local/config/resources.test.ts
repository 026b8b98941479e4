import { join } from 'node:path';
import { DescribeTableCommand, DescribeTimeToLiveCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { HeadBucketCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { LocalResourceConflictError } from '../../../../src/local/config/errors.js';
import { planLocalResources } from '../../../../src/local/config/infra.js';
import { createLocalResources } from '../../../../src/local/config/resources.js';
import { loadServerlessConfig } from '../../../../src/local/config/serverless-config.js';
import { createServiceResources } from '../../../../src/local/config/service-resources.js';
import { localClients, readStreamUntil, startLocalSqs, uniqueName } from '../../../support/aws.js';

// DynamoDB Local + s3rver from the test run's global setup; each test takes its own stage, so
// names never collide.

describe('createLocalResources', () => {
  it('creates the deployed table (keys, stream, TTL) and the archive bucket', async () => {
    const { dynamodb, s3, streams } = localClients();
    const stage = uniqueName('s');
    const resources = await createLocalResources({ dynamodb, s3, stage, env: {} });
    const plan = planLocalResources({ stage, env: {} });

    expect(resources.table.name).toBe(`tidewater-${stage}-records`);
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: resources.table.name }));
    expect(Table?.KeySchema).toEqual(plan.table.createTable.KeySchema);
    expect(Table?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' });
    expect(Table?.LatestStreamArn).toBe(resources.table.streamArn);
    const ttl = await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: resources.table.name }));
    expect(ttl.TimeToLiveDescription).toMatchObject({
      AttributeName: 'expiresAt',
      TimeToLiveStatus: 'ENABLED',
    });

    await expect(s3.send(new HeadBucketCommand({ Bucket: resources.bucket.name }))).resolves.toBeDefined();
    expect(resources.bucket).toEqual({ name: `tidewater-${stage}-archive`, archivePrefix: 'archive/' });
    expect(resources.queues).toBeUndefined();
    expect(resources.notEmulated).toContain('RecordsTable.PointInTimeRecoverySpecification');

    // The stream is live: a write shows up with both images configured.
    await dynamodb.send(
      new PutItemCommand({
        TableName: resources.table.name,
        Item: { pk: { S: 'a' }, sk: { S: 'b' }, expiresAt: { N: '1' } },
      }),
    );
    const records = await readStreamUntil(streams, resources.table.streamArn, (r) => r.length >= 1);
    expect(records[0]?.dynamodb?.StreamViewType).toBe('NEW_AND_OLD_IMAGES');
    expect(records[0]?.dynamodb?.NewImage?.expiresAt).toEqual({ N: '1' });
  });

  it('is safe to call again and reuses what matches', async () => {
    const { dynamodb, s3 } = localClients();
    const stage = uniqueName('s');
    const first = await createLocalResources({ dynamodb, s3, stage, env: {} });
    const second = await createLocalResources({ dynamodb, s3, stage, env: {} });
    expect(second.table).toEqual(first.table);
    expect(second.bucket).toEqual(first.bucket);
  });

  it('refuses a table that exists with another TTL attribute', async () => {
    const { dynamodb, s3 } = localClients();
    const stage = uniqueName('s');
    await createLocalResources({ dynamodb, s3, stage, env: {} });
    const again = createLocalResources({ dynamodb, s3, stage, env: {}, overrides: { ttlAttribute: 'ttl' } });
    await expect(again).rejects.toBeInstanceOf(LocalResourceConflictError);
    await expect(again).rejects.toThrow(/TTL on "expiresAt", infra\/ defines "ttl"/);
  });

  it('takes the same overrides and env settings as a deploy', async () => {
    const { dynamodb, s3 } = localClients();
    const stage = uniqueName('s');
    const resources = await createLocalResources({
      dynamodb,
      s3,
      stage,
      env: { TIDEWATER_TTL_ATTRIBUTE: 'ttl', TIDEWATER_BUCKET_NAME: uniqueName('named') },
      overrides: { tableName: uniqueName('replay') },
    });
    expect(resources.table.ttlAttribute).toBe('ttl');
    expect(resources.table.name).toMatch(/^replay-/);
    expect(resources.bucket.name).toMatch(/^named-/);
    const ttl = await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: resources.table.name }));
    expect(ttl.TimeToLiveDescription?.AttributeName).toBe('ttl');
  });

  it('creates both queues with their encryption and retention when given an SQS client', async () => {
    const { dynamodb, s3 } = localClients();
    const { sqs, server, stop } = await startLocalSqs();
    try {
      const stage = uniqueName('q');
      // A relative infraDir is taken from the working directory (the repository root here).
      const resources = await createLocalResources({ dynamodb, s3, sqs, stage, env: {}, infraDir: 'infra' });
      expect(Object.keys(resources.queues ?? {}).sort()).toEqual(['DeadLetterQueue', 'OnFailureQueue']);
      const deadLetter = resources.queues?.DeadLetterQueue;
      expect(deadLetter?.name).toBe(`tidewater-${stage}-archive-dead-letter`);
      expect(deadLetter?.url).toBe(`${server.endpoint}/000000000000/tidewater-${stage}-archive-dead-letter`);
      expect(deadLetter?.arn).toBe(
        `arn:aws:sqs:us-east-1:000000000000:tidewater-${stage}-archive-dead-letter`,
      );
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: deadLetter?.url, AttributeNames: ['All'] }),
      );
      expect(Attributes).toMatchObject({ MessageRetentionPeriod: '1209600', SqsManagedSseEnabled: 'true' });
    } finally {
      await stop();
    }
  });
});

describe('createServiceResources of an app with a Kinesis stream and no Kinesis client', () => {
  it('says how to give it one (what a scaffolded test meets once serverless.yml adds a Kinesis function)', async () => {
    const { dynamodb, s3 } = localClients();
    const file = join(import.meta.dirname, '../../../fixtures/apps/serverless-kinesis/serverless.yml');
    const config = await loadServerlessConfig({ file, stage: uniqueName('k').toLowerCase() });
    const created = createServiceResources({ config, dynamodb, s3 });
    await expect(created).rejects.toBeInstanceOf(LocalResourceConflictError);
    await expect(created).rejects.toThrow(
      /no Kinesis server was given: pass `kinesis: localKinesisClient\(server\.endpoint\)` with `server = await startKinesisServer\(\)`/,
    );
  });
});
