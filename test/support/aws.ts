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
import {
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  type KinesisClient,
} from '@aws-sdk/client-kinesis';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/servers/dynamodb-local.js';
import { localKinesisClient } from '../../src/local/servers/kinesis-server.js';
import { localS3Client } from '../../src/local/servers/local-s3-client.js';
import { type SqsServer, startSqsServer } from '../../src/local/servers/sqs-server.js';

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
    s3: localS3Client(s3Endpoint),
  };
}

/**
 * A test's own local SQS server (not shared: tests inspect its queues) and a client for it.
 * `stop()` destroys the client and stops the server.
 */
export async function startLocalSqs(): Promise<{ sqs: SQSClient; server: SqsServer; stop(): Promise<void> }> {
  const server = await startSqsServerOnFreePort();
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

/**
 * startSqsServer asks the OS for a free port, closes it, then listens on it: in between, another
 * socket (an outgoing connection of a test running alongside takes its port from the same range)
 * can take it. DynamoDB Local and the S3 server retry that case themselves; the SQS server does
 * not, so the tests do.
 */
export async function startSqsServerOnFreePort(): Promise<SqsServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startSqsServer();
    } catch (error) {
      if (attempt >= 5 || !String((error as Error)?.message).includes('EADDRINUSE')) throw error;
    }
  }
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

/** A table keyed by string `pk` and `sk`: the sample records' (and the archive's default key attributes). */
export const STRING_SORT_KEY: TestTableOptions = {
  attributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
  ],
  keySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
};

/** A table keyed by a string partition key `pk` and a number sort key `sk`: where a number key's spellings meet. */
export const NUMBER_SORT_KEY: TestTableOptions = {
  attributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'N' },
  ],
  keySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
};

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
  if (options.ttlAttribute) await enableTtl(dynamodb, tableName, options.ttlAttribute);
  const streamArn = created.TableDescription?.LatestStreamArn;
  if (!streamArn) throw new Error('DynamoDB Local created a table without a stream');
  return {
    tableName,
    streamArn,
    drop: () => dynamodb.send(new DeleteTableCommand({ TableName: tableName })).then(() => undefined),
  };
}

/**
 * Turns TTL on for a table. DynamoDB Local's TTL sweep runs every second from then on, at a time
 * no test controls: a test that asserts where a TTL delete lands among its own writes creates the
 * table without `ttlAttribute`, makes every write, and only then calls this, so the sweep cannot
 * run between two of its writes.
 */
export async function enableTtl(
  dynamodb: DynamoDBClient,
  tableName: string,
  attribute: string,
): Promise<void> {
  await dynamodb.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { Enabled: true, AttributeName: attribute },
    }),
  );
}

export async function createTestBucket(s3: S3Client): Promise<string> {
  const bucket = uniqueName('b');
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

/**
 * Reads every shard of a stream from TRIM_HORIZON until `until(records)` holds or the timeout
 * passes. Returns the records in shard order. Test-only: the real poller lives in src/local.
 * The timeout only turns a condition that never comes into a clear error; it returns as soon as
 * the condition holds. DynamoDB Local writes a stream record within the write's own request, so
 * what a test wrote is all there once it is read; only TTL deletes (DynamoDB Local's own sweep)
 * arrive later, at a time the test does not set: `until` waits for those.
 */
export async function readStreamUntil(
  streams: DynamoDBStreamsClient,
  streamArn: string,
  until: (records: _Record[]) => boolean,
  timeoutMs = 45_000,
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

/** A client for the run's Kinesis server (see global-setup.ts). */
export function localKinesis(): KinesisClient {
  return localKinesisClient(inject('kinesisEndpoint'));
}

/**
 * A fresh Kinesis stream on the run's Kinesis server (ACTIVE at once); its ARN as the server writes
 * it. `streamName`: the name an app under test gives it (default a unique one).
 */
export async function createTestKinesisStream(
  kinesis: KinesisClient,
  shardCount = 1,
  streamName = uniqueName('k'),
) {
  await kinesis.send(new CreateStreamCommand({ StreamName: streamName, ShardCount: shardCount }));
  const summary = await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: streamName }));
  return { streamName, streamArn: summary.StreamDescriptionSummary?.StreamARN as string };
}
