import { randomUUID } from 'node:crypto';
import {
  type AttributeDefinition,
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  type KeySchemaElement,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/dynamodb-local.js';
import { type SqsServer, startSqsServer } from '../../src/local/sqs-server.js';

const clientConfig = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };

/** Clients pointed at the run's DynamoDB Local and S3 server (see global-setup.ts). */
export function localClients() {
  const dynamoEndpoint = inject('dynamoEndpoint');
  const s3Endpoint = inject('s3Endpoint');
  return {
    dynamoEndpoint,
    s3Endpoint,
    dynamodb: new DynamoDBClient({ ...clientConfig, endpoint: dynamoEndpoint }),
    streams: new DynamoDBStreamsClient({ ...clientConfig, endpoint: dynamoEndpoint }),
    s3: new S3Client({
      ...clientConfig,
      endpoint: s3Endpoint,
      forcePathStyle: true,
      // s3rver predates flexible checksums; send them only where S3 requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    }),
  };
}

/**
 * A test's own local SQS server (not shared: tests inspect its queues) and a client for it.
 * `stop()` destroys the client and stops the server.
 */
export async function startLocalSqs(): Promise<{ sqs: SQSClient; server: SqsServer; stop(): Promise<void> }> {
  const server = await startSqsServer();
  const sqs = new SQSClient({ ...clientConfig, endpoint: server.endpoint });
  return {
    sqs,
    server,
    async stop() {
      sqs.destroy();
      await server.stop();
    },
  };
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export interface TestTableOptions {
  ttlAttribute?: string;
  streamViewType?: 'KEYS_ONLY' | 'NEW_IMAGE' | 'OLD_IMAGE' | 'NEW_AND_OLD_IMAGES';
  keySchema?: KeySchemaElement[];
  attributeDefinitions?: AttributeDefinition[];
}

/** A fresh table (pk string hash key by default) with a stream and, if asked, TTL. */
export async function createTestTable(dynamodb: DynamoDBClient, options: TestTableOptions = {}) {
  const tableName = uniqueName('t');
  const created = await dynamodb.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: options.attributeDefinitions ?? [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: options.keySchema ?? [{ AttributeName: 'pk', KeyType: 'HASH' }],
      StreamSpecification: {
        StreamEnabled: true,
        StreamViewType: options.streamViewType ?? 'NEW_AND_OLD_IMAGES',
      },
    }),
  );
  if (options.ttlAttribute) {
    await dynamodb.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { Enabled: true, AttributeName: options.ttlAttribute },
      }),
    );
  }
  const streamArn = created.TableDescription?.LatestStreamArn;
  if (!streamArn) throw new Error('DynamoDB Local created a table without a stream');
  return {
    tableName,
    streamArn,
    drop: () => dynamodb.send(new DeleteTableCommand({ TableName: tableName })).then(() => undefined),
  };
}

export async function createTestBucket(s3: S3Client): Promise<string> {
  const bucket = uniqueName('b');
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

/**
 * Reads every shard of a stream from TRIM_HORIZON until `until(records)` holds or the timeout
 * passes. Returns the records in shard order. Test-only: the real poller lives in src/local.
 */
export async function readStreamUntil(
  streams: DynamoDBStreamsClient,
  streamArn: string,
  until: (records: _Record[]) => boolean,
  timeoutMs = 20_000,
): Promise<_Record[]> {
  const deadline = Date.now() + timeoutMs;
  const description = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
  const iterators = new Map<string, string | undefined>();
  for (const shard of description.StreamDescription?.Shards ?? []) {
    const it = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shard.ShardId,
        ShardIteratorType: 'TRIM_HORIZON',
      }),
    );
    iterators.set(shard.ShardId ?? '', it.ShardIterator);
  }
  const records: _Record[] = [];
  while (Date.now() < deadline) {
    for (const [shardId, iterator] of iterators) {
      if (!iterator) continue;
      const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
      records.push(...(page.Records ?? []));
      iterators.set(shardId, page.NextShardIterator);
    }
    if (until(records)) return records;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(
    `stream ${streamArn}: condition not met within ${timeoutMs} ms (${records.length} records read)`,
  );
}
