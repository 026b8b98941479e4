import { LambdaClient } from '@aws-sdk/client-lambda';
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLambdaContext } from '../../../src/lambda/context.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/servers/dynamodb-local.js';
import { createStreamHandler, type PipelineLogger } from '../../../src/pipeline/index.js';
import {
  handlerTarget,
  lambdaTarget,
  type RedriveMessageError,
  redrive,
} from '../../../src/redrive/index.js';
import {
  serializeDeadLetterEntry,
  serializeDeadLetterPointer,
} from '../../../src/sinks/dead-letter-message.js';
import { MemorySink } from '../../../src/sinks/memory-sink.js';
import { S3DeadLetterSink } from '../../../src/sinks/s3-dead-letter-sink.js';
import { SqsDeadLetterSink } from '../../../src/sinks/sqs-dead-letter-sink.js';
import type { DeadLetterEntry, DeadLetterSink } from '../../../src/sinks/types.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { startLambdaServer } from './lambda-server.js';
import { entryOf, localSqsForFile, type StateSink, sinkHandler, streamRecords } from './support.js';

const { streams, s3 } = localClients();
const sqs = localSqsForFile();

async function queue(name: string): Promise<{ queueUrl: string; name: string }> {
  const { QueueUrl } = await sqs().sqs.send(new CreateQueueCommand({ QueueName: name }));
  return { queueUrl: QueueUrl as string, name };
}

async function send(queueUrl: string, body: string): Promise<string> {
  return (await sqs().sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body })))
    .MessageId as string;
}

const common = () => ({ streams, sqs: sqs().sqs, s3, waitTimeSeconds: 0 });

/**
 * The real pipeline whose only sink always fails, its dead-letter stage writing to `deadLetter`:
 * the function reports success for a record it dead-letters. `runs` counts its invocations, and
 * past `maxRuns` it throws, so a redrive that keeps feeding itself ends (and the test fails) rather
 * than running on.
 */
function deadLetteringHandler(deadLetter: DeadLetterSink, maxRuns = 5) {
  const runs = { count: 0 };
  const pipeline = createStreamHandler({
    routes: [{ when: ['insert', 'modify'], to: new MemorySink({ name: 'index', failWhen: () => true }) }],
    retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    deadLetter,
    logger: pino({ level: 'silent' }) as unknown as PipelineLogger,
    metrics: false,
  });
  const handler = async (event: DynamoDBStreamEvent, context: Context) => {
    runs.count++;
    if (runs.count > maxRuns) throw new Error('redrive fed itself');
    return pipeline(event, context);
  };
  return { handler, runs };
}

describe('redrive believes nothing it reads', () => {
  it.each(['handler', 'deployed function'] as const)(
    'a queue that is also the dead-letter destination (%s): the record comes back, the original is kept, the run ends',
    async (kind) => {
      const { table, records } = await streamRecords(['loop']);
      const { queueUrl, name } = await queue(`self-${kind.length}-${table.tableName}`);
      const originalId = await send(
        queueUrl,
        serializeDeadLetterEntry(entryOf(records[0]!, table.streamArn)),
      );
      const { handler, runs } = deadLetteringHandler(new SqsDeadLetterSink({ queueUrl, client: sqs().sqs }));
      // The deployed function is seen only through Invoke: redrive learns nothing from it but its response.
      const lambda =
        kind === 'handler'
          ? undefined
          : await startLambdaServer({
              orders: (event) =>
                handler(
                  event as DynamoDBStreamEvent,
                  createLambdaContext({
                    functionName: 'orders',
                    functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:orders',
                    timeoutMs: 60_000,
                    memoryLimitInMB: 128,
                  }),
                ),
            });
      try {
        const target =
          lambda === undefined
            ? handlerTarget(handler)
            : lambdaTarget({
                functionName: 'orders',
                client: new LambdaClient({
                  region: LOCAL_REGION,
                  credentials: LOCAL_CREDENTIALS,
                  endpoint: lambda.endpoint,
                }),
              });
        const report = await redrive({ ...common(), streamArn: table.streamArn, queueUrl, target });
        expect(runs.count).toBe(1);
        expect(report).toMatchObject({
          stopped: 'dead-lettered-again',
          messagesRead: 2,
          messagesRemoved: 0,
          succeeded: 0,
          failed: 1,
        });
        expect(report.kept).toEqual([
          expect.objectContaining({ source: `sqs:${originalId}`, reason: 'dead-lettered-again' }),
        ]);
        // The original stays, visible again; the copy the run made is gone.
        expect(
          sqs()
            .server.messages(name)
            .map((m) => m.messageId),
        ).toEqual([originalId]);
      } finally {
        await lambda?.stop();
      }
    },
  );

  it('two entries of one record made before the run (a retried send) are both run and removed, not taken for the run feeding itself', async () => {
    const { table, records } = await streamRecords(['twice']);
    const { queueUrl, name } = await queue(`dup-${table.tableName}`);
    const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const entry = serializeDeadLetterEntry({ ...entryOf(records[0]!, table.streamArn), at: anHourAgo });
    await send(queueUrl, entry);
    await send(queueUrl, entry);
    const sink: StateSink = new Map();
    const report = await redrive({
      ...common(),
      streamArn: table.streamArn,
      queueUrl,
      target: handlerTarget(sinkHandler(sink)),
    });
    expect(report.stopped).toBeUndefined();
    expect(report).toMatchObject({ messagesRead: 2, messagesRemoved: 2, succeeded: 2, failed: 0 });
    expect(report.kept).toEqual([]);
    expect(sink.has('twice')).toBe(true);
    expect(sqs().server.messages(name)).toEqual([]);
  });

  it('a bucket that is also the dead-letter destination: the entry is written again to its key and kept', async () => {
    const { table, records } = await streamRecords(['loop-s3']);
    const bucket = await createTestBucket(s3);
    const deadLetter = new S3DeadLetterSink({ bucket, client: s3, prefix: 'dead-letter' });
    await deadLetter.send([entryOf(records[0]!, table.streamArn)], {});
    const { handler, runs } = deadLetteringHandler(deadLetter);

    const report = await redrive({
      ...common(),
      streamArn: table.streamArn,
      bucket,
      prefix: 'dead-letter/',
      target: handlerTarget(handler),
    });
    expect(runs.count).toBe(1);
    expect(report).toMatchObject({ stopped: 'dead-lettered-again', messagesRemoved: 0, failed: 1 });
    expect(report.kept.map((k) => k.reason)).toEqual(['dead-lettered-again']);
    // Deleting it would have lost the record: the object is its only copy.
    expect((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents).toHaveLength(1);
  });

  it('a pointer to another bucket or outside the prefix is refused: the object is neither run nor deleted', async () => {
    const { table, records } = await streamRecords(['p1', 'p2']);
    const { queueUrl, name } = await queue(`ptr-${table.tableName}`);
    const overflow = await createTestBucket(s3);
    const elsewhere = await createTestBucket(s3);
    const entries = records.map((r) => entryOf(r, table.streamArn));
    // Two valid entries, stored where a forged pointer could lead: another bucket, another prefix.
    const targets = [
      { bucket: elsewhere, key: 'overflow/a.json', entry: entries[0] as DeadLetterEntry },
      { bucket: overflow, key: 'secrets/b.json', entry: entries[1] as DeadLetterEntry },
    ];
    const ids: string[] = [];
    for (const t of targets) {
      await s3.send(
        new PutObjectCommand({
          Bucket: t.bucket,
          Key: t.key,
          Body: serializeDeadLetterEntry(t.entry),
        }),
      );
      ids.push(await send(queueUrl, serializeDeadLetterPointer(t.entry, t.bucket, t.key, 10)));
    }
    const sink: StateSink = new Map();
    const report = await redrive({
      ...common(),
      streamArn: table.streamArn,
      queueUrl,
      pointerBucket: overflow,
      pointerPrefix: 'overflow/',
      target: handlerTarget(sinkHandler(sink)),
    });
    expect(sink.size).toBe(0);
    expect(report.recordsRedriven).toBe(0);
    expect(
      report.errors.map((e) => [(e as RedriveMessageError).problem, (e as RedriveMessageError).source]),
    ).toEqual(ids.map((id) => ['pointer-outside', `sqs:${id}`]));
    expect(report.kept.map((k) => [k.source, k.reason])).toEqual(ids.map((id) => [`sqs:${id}`, 'refused']));
    for (const t of targets) await s3.send(new HeadObjectCommand({ Bucket: t.bucket, Key: t.key }));
    expect(sqs().server.messages(name)).toHaveLength(2);
  });

  it('a record of another table or account inside an entry is refused and its message kept', async () => {
    const { table, records } = await streamRecords(['r1']);
    const { queueUrl, name } = await queue(`rec-${table.tableName}`);
    const record = records[0]!;
    const otherTable = { ...record, eventSourceARN: table.streamArn.replace(table.tableName, 'payments') };
    const otherAccount = {
      ...record,
      eventSourceARN: table.streamArn.replace('000000000000', '999999999999'),
    };
    // The envelope names the right stream: only the record inside says where it is from.
    const ids = [
      await send(
        queueUrl,
        serializeDeadLetterEntry({ ...entryOf(record, table.streamArn), record: otherTable }),
      ),
      await send(
        queueUrl,
        serializeDeadLetterEntry({ ...entryOf(record, table.streamArn), record: otherAccount }),
      ),
    ];
    const sink: StateSink = new Map();
    const report = await redrive({
      ...common(),
      streamArn: table.streamArn,
      queueUrl,
      target: handlerTarget(sinkHandler(sink)),
    });
    expect(sink.size).toBe(0);
    expect(report.errors.map((e) => (e as RedriveMessageError).problem)).toEqual([
      'other-stream',
      'other-stream',
    ]);
    expect(report.kept.map((k) => k.source).sort()).toEqual(ids.map((id) => `sqs:${id}`).sort());
    expect(sqs().server.messages(name)).toHaveLength(2);
  });

  it('a pointer into a missing bucket is reported and the run goes on; a dry run deletes nothing and goes on too', async () => {
    const { table, records } = await streamRecords(['m1', 'm2']);
    const { queueUrl, name } = await queue(`miss-${table.tableName}`);
    const entries = records.map((r) => entryOf(r, table.streamArn));
    const missing = `missing-${table.tableName}`;
    const brokenId = await send(
      queueUrl,
      serializeDeadLetterPointer(entries[0] as DeadLetterEntry, missing, 'overflow/x.json', 10),
    );
    await send(queueUrl, serializeDeadLetterEntry(entries[1] as DeadLetterEntry));
    const sink: StateSink = new Map();
    const options = {
      ...common(),
      streamArn: table.streamArn,
      queueUrl,
      pointerBucket: missing,
      target: handlerTarget(sinkHandler(sink)),
    };

    const dry = await redrive({ ...options, dryRun: true });
    expect(dry).toMatchObject({ messagesRead: 2, recordsRedriven: 1, messagesRemoved: 0 });
    expect(dry.errors.map((e) => (e as RedriveMessageError).problem)).toEqual(['unreadable']);
    expect(sink.size).toBe(0);
    expect(sqs().server.messages(name)).toHaveLength(2);

    const report = await redrive(options);
    expect(report).toMatchObject({ messagesRead: 2, succeeded: 1, messagesRemoved: 1 });
    expect(report.kept).toEqual([expect.objectContaining({ source: `sqs:${brokenId}`, reason: 'refused' })]);
    expect([...sink.keys()]).toEqual(['m2']);
    expect(
      sqs()
        .server.messages(name)
        .map((m) => m.messageId),
    ).toEqual([brokenId]);
  });

  it('a run reads at most maxMessages and says it stopped; the rest stays for the next run', async () => {
    const { table, records } = await streamRecords(['b1', 'b2', 'b3']);
    const { queueUrl, name } = await queue(`bound-${table.tableName}`);
    for (const r of records) await send(queueUrl, serializeDeadLetterEntry(entryOf(r, table.streamArn)));
    const sink: StateSink = new Map();
    const progress: number[] = [];
    const report = await redrive({
      ...common(),
      streamArn: table.streamArn,
      queueUrl,
      maxMessages: 2,
      onProgress: (p) => progress.push(p.messagesRead),
      target: handlerTarget(sinkHandler(sink)),
    });
    expect(report).toMatchObject({ messagesRead: 2, messagesRemoved: 2, stopped: 'max-messages' });
    expect(progress).toEqual([1, 2]);
    expect(sqs().server.messages(name)).toHaveLength(1);
  });
});
