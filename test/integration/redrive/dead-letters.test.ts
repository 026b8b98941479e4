import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { handlerTarget, redrive } from '../../../src/redrive/index.js';
import { S3DeadLetterSink } from '../../../src/sinks/s3-dead-letter-sink.js';
import { SqsDeadLetterSink } from '../../../src/sinks/sqs-dead-letter-sink.js';
import type { DeadLetterEntry } from '../../../src/sinks/types.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import {
  entryOf,
  localSqsForFile,
  type StateSink,
  sinkHandler,
  streamRecords,
  tableState,
} from './support.js';

const { streams, s3 } = localClients();
const sqs = localSqsForFile();

describe("redrive of tidewater's own dead letters", () => {
  it('SqsDeadLetterSink messages, an oversize one through its S3 pointer, and S3DeadLetterSink objects', async () => {
    const { table, records } = await streamRecords(['d1', 'd2', 'd3']);
    expect(records).toHaveLength(3);
    const entries = records.map((r) => entryOf(r, table.streamArn));
    const { QueueUrl } = await sqs().sqs.send(new CreateQueueCommand({ QueueName: `dl-${table.tableName}` }));
    const bucket = await createTestBucket(s3);
    const overflow = new S3DeadLetterSink({ bucket, client: s3, prefix: 'overflow' });
    const small = new SqsDeadLetterSink({ queueUrl: QueueUrl as string, client: sqs().sqs, overflow });
    const tiny = new SqsDeadLetterSink({
      queueUrl: QueueUrl as string,
      client: sqs().sqs,
      overflow,
      maxMessageBytes: 100,
    });
    await small.send([entries[0] as DeadLetterEntry], {});
    await tiny.send([entries[1] as DeadLetterEntry], {});
    await new S3DeadLetterSink({ bucket, client: s3, prefix: 'dead-letter' }).send(
      [entries[2] as DeadLetterEntry],
      {},
    );

    const sink: StateSink = new Map();
    const options = { streams, sqs: sqs().sqs, s3, waitTimeSeconds: 0, streamArn: table.streamArn };
    const target = handlerTarget(sinkHandler(sink));
    const fromQueue = await redrive({
      ...options,
      queueUrl: QueueUrl as string,
      pointerBucket: bucket,
      pointerPrefix: 'overflow/',
      target,
    });
    expect(fromQueue).toMatchObject({ messagesRead: 2, succeeded: 2, messagesRemoved: 2 });
    const fromBucket = await redrive({ ...options, bucket, prefix: 'dead-letter/', target });
    expect(fromBucket).toMatchObject({ messagesRead: 1, succeeded: 1, messagesRemoved: 1 });
    expect(sink).toEqual(await tableState(table.tableName));
    // The pointer's overflow object went with its message; the dead-letter object after success.
    expect((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).toEqual([]);
  });
});
