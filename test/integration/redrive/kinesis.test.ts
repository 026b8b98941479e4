import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { PutRecordCommand } from '@aws-sdk/client-kinesis';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { KinesisStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MemoryFailureDestination,
  S3FailureDestination,
  SqsFailureDestination,
} from '../../../src/local/emulator/destinations.js';
import { KinesisMappingEmulator } from '../../../src/local/emulator/kinesis-emulator.js';
import { KinesisShardReader } from '../../../src/local/emulator/kinesis-reader.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/servers/dynamodb-local.js';
import { createStreamHandler, kinesisSource } from '../../../src/pipeline/index.js';
import type { MappingInvocationRecord } from '../../../src/records/on-failure-record.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import {
  handlerTarget,
  lambdaTarget,
  type RedriveTarget,
  redrive,
  StreamRangeExpiredError,
} from '../../../src/redrive/index.js';
import { readKinesisRange } from '../../../src/redrive/read-kinesis-range.js';
import { MemorySink } from '../../../src/sinks/memory-sink.js';
import {
  createTestBucket,
  createTestKinesisStream,
  createTestTable,
  localClients,
  localKinesis,
  startLocalSqs,
} from '../../support/aws.js';
import { bridgeTableToKinesis } from '../../support/kinesis-bridge.js';
import { DOCUMENTED_KINESIS } from '../../support/on-failure-record.js';
import { startLambdaServer } from './lambda-server.js';

const { dynamodb, streams, s3 } = localClients();
const kinesis = localKinesis();
let local: Awaited<ReturnType<typeof startLocalSqs>>;

beforeAll(async () => {
  local = await startLocalSqs();
});
afterAll(async () => {
  await local.stop();
  kinesis.destroy();
});

const PKS = ['a', 'b', 'c', 'd'];

/**
 * A table whose changes are streamed to Kinesis, and a Kinesis mapping whose function fails on
 * `failAt` every time: Lambda gives the batch up and sends its on-failure record (KinesisBatchInfo)
 * to an SQS queue and an S3 bucket.
 */
async function failedKinesisBatch(failAt: string) {
  const table = await createTestTable(dynamodb);
  for (const pk of PKS)
    await dynamodb.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: { pk: { S: pk }, n: { N: '12345678901234567890123456789012345678' } },
      }),
    );
  const stream = await createTestKinesisStream(kinesis, 1);
  await bridgeTableToKinesis({ streams, kinesis }, table, stream.streamArn);
  const { QueueUrl } = await local.sqs.send(
    new CreateQueueCommand({ QueueName: `kfail-${table.tableName}` }),
  );
  const queueUrl = QueueUrl as string;
  const bucket = await createTestBucket(s3);
  const memory = new MemoryFailureDestination();
  const destinations = [
    memory,
    new SqsFailureDestination(local.sqs, queueUrl),
    new S3FailureDestination(s3, bucket),
  ];
  const emulator = new KinesisMappingEmulator({
    batchSize: 100,
    maximumRetryAttempts: 1,
    reportBatchItemFailures: true,
    onFailure: {
      async send(record, records) {
        for (const d of destinations) await d.send(record, records);
      },
    },
    handler: async (event: KinesisStreamEvent) => {
      for (const r of event.Records) {
        const change = JSON.parse(Buffer.from(r.kinesis.data, 'base64').toString('utf8'));
        if (change.dynamodb.Keys.pk.S === failAt) throw new Error(`cannot handle ${failAt}`);
      }
    },
  });
  await new KinesisShardReader({ kinesis, streamArn: stream.streamArn, pollIntervalMs: 10 }).runEmulator(
    emulator,
    {
      stopWhenCaughtUp: true,
    },
  );
  expect(memory.records).toHaveLength(1);
  const record = memory.records[0] as MappingInvocationRecord;
  expect('KinesisBatchInfo' in record).toBe(true);
  return { table, stream, queueUrl, bucket, record };
}

/** A Kinesis handler as a user writes it, its inserts kept in a MemorySink. */
function fixedHandler() {
  const sink = new MemorySink<ClassifiedRecord>();
  const handler = createStreamHandler({
    source: kinesisSource(),
    routes: [{ when: 'insert', to: sink }],
    metrics: false,
  });
  return { sink, target: handlerTarget(handler, { functionName: 'archive' }) };
}

const inserted = (sink: MemorySink<ClassifiedRecord>) => sink.records.map((r) => r.keys.pk).sort();

/** A redrive of a Kinesis stream's failed batches from their SQS queue (no DynamoDB Streams client: none is needed). */
const redriveFromQueue = (streamArn: string, queueUrl: string, target: RedriveTarget) =>
  redrive({ streamArn, target, queueUrl, kinesis, sqs: local.sqs, waitTimeSeconds: 0 });

describe('redrive of a Kinesis mapping’s failed batches, on DynamoDB Local, the Kinesis and SQS servers', () => {
  it('reads the KinesisBatchInfo range back from the Kinesis stream, runs it, and removes the message', async () => {
    const { stream, queueUrl, record, table } = await failedKinesisBatch('c');
    const info = (record as { KinesisBatchInfo: { batchSize: number; shardId: string } }).KinesisBatchInfo;
    expect(info.batchSize).toBe(PKS.length);
    const { sink, target } = fixedHandler();
    const report = await redriveFromQueue(stream.streamArn, queueUrl, target);
    expect(report).toMatchObject({
      messagesRead: 1,
      recordsRedriven: PKS.length,
      succeeded: PKS.length,
      failed: 0,
      messagesRemoved: 1,
      errors: [],
      rangesExpired: [],
    });
    expect(report.items[0]).toMatchObject({ kind: 'on-failure', shardId: info.shardId, records: PKS.length });
    expect(inserted(sink)).toEqual(PKS);
    // Each redriven record came from the Kinesis stream, as Lambda delivers it.
    expect(sink.records.every((r) => r.origin.source === 'kinesis')).toBe(true);
    const left = await local.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    expect(left.Messages ?? []).toHaveLength(0);
    await table.drop();
  });

  it("takes an S3 destination's payload as the batch, and refuses the table's DynamoDB stream", async () => {
    const { stream, bucket, table } = await failedKinesisBatch('a');
    const wrong = await redrive({
      streamArn: table.streamArn,
      target: fixedHandler().target,
      bucket,
      s3,
      waitTimeSeconds: 0,
    });
    expect(wrong.errors.map((e) => e.name)).toEqual(['RedriveMessageError']);
    expect(wrong.messagesRemoved).toBe(0);
    const { sink, target } = fixedHandler();
    const report = await redrive({ streamArn: stream.streamArn, target, bucket, s3, waitTimeSeconds: 0 });
    expect(report).toMatchObject({ succeeded: PKS.length, messagesRemoved: 1, errors: [] });
    expect(inserted(sink)).toEqual(PKS);
    await table.drop();
  });

  it('invokes the deployed function with a Kinesis event and reads its partial batch response by Kinesis sequence number', async () => {
    const { stream, queueUrl, table } = await failedKinesisBatch('c');
    // The function still fails on c: it reports c (by its Kinesis sequence number), as Lambda's
    // partial batch response for Kinesis does, and everything from c on counts as not done.
    const lambda = await startLambdaServer({
      'orders-kinesis': async (event) => {
        const records = (event as KinesisStreamEvent).Records;
        const at = records.find((r) => {
          const change = JSON.parse(Buffer.from(r.kinesis.data, 'base64').toString('utf8'));
          return change.dynamodb.Keys.pk.S === 'c';
        });
        return { batchItemFailures: at === undefined ? [] : [{ itemIdentifier: at.kinesis.sequenceNumber }] };
      },
    });
    try {
      const client = new LambdaClient({
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
        endpoint: lambda.endpoint,
      });
      const target = lambdaTarget({ functionName: 'orders-kinesis', client });
      const report = await redriveFromQueue(stream.streamArn, queueUrl, target);
      expect(report).toMatchObject({
        recordsRedriven: PKS.length,
        succeeded: 2,
        failed: 2,
        messagesRemoved: 0,
      });
      expect(report.failures[0]?.error).toBe('the function reported batch item failures');
      const sent = lambda.invoked[0]?.event as KinesisStreamEvent;
      expect(sent.Records.map((r) => r.eventSource)).toEqual(PKS.map(() => 'aws:kinesis'));
      expect(sent.Records[0]?.eventSourceARN).toBe(stream.streamArn);
      const left = await local.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0, VisibilityTimeout: 0 }),
      );
      expect(left.Messages ?? []).toHaveLength(1);
    } finally {
      await lambda.stop();
      await table.drop();
    }
  });

  it('a range the stream no longer has is reported with what to recover, and the message stays', async () => {
    const { stream, queueUrl, record, table } = await failedKinesisBatch('b');
    // A failing handler first: the batch stays failed, the message stays in the queue.
    const broken = handlerTarget(async () => {
      throw new Error('still broken');
    });
    const failing = await redriveFromQueue(stream.streamArn, queueUrl, broken);
    expect(failing).toMatchObject({ failed: PKS.length, messagesRemoved: 0 });
    expect(failing.failures[0]?.sequenceNumbers).toHaveLength(PKS.length);
    // The same failure naming a shard the stream no longer has (a resharded stream past retention).
    const { QueueUrl } = await local.sqs.send(
      new CreateQueueCommand({ QueueName: `kgone-${table.tableName}` }),
    );
    const info = (record as { KinesisBatchInfo: object }).KinesisBatchInfo;
    const gone = { ...record, KinesisBatchInfo: { ...info, shardId: 'shardId-000000000007' } };
    await local.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: JSON.stringify(gone) }));
    const { sink, target } = fixedHandler();
    const report = await redriveFromQueue(stream.streamArn, QueueUrl as string, target);
    expect(report.rangesExpired).toHaveLength(1);
    const expired = report.rangesExpired[0] as StreamRangeExpiredError;
    expect(expired).toBeInstanceOf(StreamRangeExpiredError);
    expect(expired).toMatchObject({
      reason: 'shard-gone',
      streamArn: stream.streamArn,
      shardId: 'shardId-000000000007',
    });
    expect(expired.message).toMatch(/recover the items written between/);
    expect(report.messagesRemoved).toBe(0);
    expect(sink.records).toHaveLength(0);
    await table.drop();
  });

  it('a sequence number from another stream (one deleted and made again) is a range gone, not a crash', async () => {
    const other = await createTestKinesisStream(kinesis, 1);
    const put = await kinesis.send(
      new PutRecordCommand({ StreamName: other.streamName, PartitionKey: 'p', Data: Buffer.from('{}') }),
    );
    const stream = await createTestKinesisStream(kinesis, 1);
    const sequence = put.SequenceNumber as string;
    const info = {
      ...DOCUMENTED_KINESIS.KinesisBatchInfo,
      shardId: put.ShardId as string,
      streamArn: stream.streamArn,
      startSequenceNumber: sequence,
      endSequenceNumber: sequence,
    };
    const error = await readKinesisRange(kinesis, info).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamRangeExpiredError);
    expect(error).toMatchObject({ streamArn: stream.streamArn, startSequenceNumber: sequence });
    // Kinesis refuses a number another stream gave (InvalidArgumentException: shard-gone); the
    // local server takes one from a stream made in the same second, and its shard has no such
    // record (start-missing). Either way the range is reported gone, never thrown as a crash.
    expect(['shard-gone', 'start-missing']).toContain((error as StreamRangeExpiredError).reason);
  });
});
