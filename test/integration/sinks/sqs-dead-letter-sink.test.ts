import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, PurgeQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/servers/dynamodb-local.js';
import type { SqsServer } from '../../../src/local/servers/sqs-server.js';
import { S3DeadLetterSink } from '../../../src/s3.js';
import { DEAD_LETTER_POINTER_TYPE, DEAD_LETTER_TYPE } from '../../../src/sinks/dead-letter-message.js';
import { DeadLetterSendError } from '../../../src/sinks/index.js';
import { SqsDeadLetterSink } from '../../../src/sqs.js';
import { createTestBucket, localClients, startLocalSqs } from '../../support/aws.js';
import { entry } from './dead-letter-entry.js';

interface SqsCall {
  target: string;
  body: {
    QueueUrl: string;
    Entries: { Id: string; MessageBody: string; MessageGroupId?: string; MessageDeduplicationId?: string }[];
  };
}

/**
 * A minimal SQS endpoint speaking the AWS JSON 1.0 protocol for SendMessageBatch, so the real
 * SDK client sends real HTTP. `failIds` lets a test fail chosen entries with a server fault.
 */
async function startSqs(
  plan: { failOnce?: Set<string> } = {},
): Promise<{ server: Server; endpoint: string; calls: SqsCall[] }> {
  const calls: SqsCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target']);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SqsCall['body'];
      calls.push({ target, body });
      const successful = [];
      const failed = [];
      for (const e of body.Entries) {
        const seq = (JSON.parse(e.MessageBody) as { sequenceNumber?: string }).sequenceNumber ?? '';
        if (plan.failOnce?.delete(seq)) {
          failed.push({ Id: e.Id, SenderFault: false, Code: 'InternalError', Message: 'injected' });
          continue;
        }
        successful.push({
          Id: e.Id,
          MessageId: `msg-${calls.length}-${e.Id}`,
          MD5OfMessageBody: createHash('md5').update(e.MessageBody).digest('hex'),
        });
      }
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify({ Successful: successful, Failed: failed }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

function sqsClient(endpoint: string): SQSClient {
  return new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint, maxAttempts: 2 });
}

describe('SqsDeadLetterSink over HTTP with the real SDK client', () => {
  const { s3 } = localClients();
  let sqs: Awaited<ReturnType<typeof startSqs>>;
  const failOnce = new Set<string>();
  beforeAll(async () => {
    sqs = await startSqs({ failOnce });
  });
  afterAll(async () => {
    await new Promise((resolve) => sqs.server.close(resolve));
  });

  it('sends entries 10 per SendMessageBatch, in order, as JSON carrying the raw record and the error', async () => {
    const start = sqs.calls.length;
    const sink = new SqsDeadLetterSink({
      client: sqsClient(sqs.endpoint),
      queueUrl: `${sqs.endpoint}/123456789012/dlq`,
    });
    const entries = Array.from({ length: 23 }, (_, i) => entry(i));
    await sink.send(entries, {});
    const calls = sqs.calls.slice(start);
    expect(calls.map((c) => c.target)).toEqual(Array(3).fill('AmazonSQS.SendMessageBatch'));
    expect(calls.map((c) => c.body.Entries.length)).toEqual([10, 10, 3]);
    const bodies = calls.flatMap((c) => c.body.Entries.map((e) => JSON.parse(e.MessageBody)));
    expect(bodies.map((b) => b.sequenceNumber)).toEqual(entries.map((e) => e.sequenceNumber));
    expect(bodies[2]).toMatchObject({
      type: DEAD_LETTER_TYPE,
      reason: 'retries-exhausted',
      error: { name: 'ArchiveWriteError' },
    });
    expect(bodies[2].record.dynamodb.bin).toBe(Buffer.from([1, 2, 2]).toString('base64'));
  });

  it('resends entries SQS failed with a server fault', async () => {
    const start = sqs.calls.length;
    failOnce.add('1004');
    const sink = new SqsDeadLetterSink({
      client: sqsClient(sqs.endpoint),
      queueUrl: `${sqs.endpoint}/123456789012/dlq`,
    });
    await sink.send([entry(3), entry(4), entry(5)], {});
    const calls = sqs.calls.slice(start);
    expect(calls.map((c) => c.body.Entries.length)).toEqual([3, 1]);
    expect(JSON.parse(calls[1]?.body.Entries[0]?.MessageBody ?? '{}').sequenceNumber).toBe('1004');
  });

  it('sets group and deduplication ids on a FIFO queue, stable per entry', async () => {
    const start = sqs.calls.length;
    const sink = new SqsDeadLetterSink({
      client: sqsClient(sqs.endpoint),
      queueUrl: `${sqs.endpoint}/123456789012/dlq.fifo`,
    });
    await sink.send([entry(1)], {});
    await sink.send([entry(1)], {});
    const [a, b] = sqs.calls.slice(start).map((c) => c.body.Entries[0]);
    expect(a?.MessageGroupId).toBe(entry(1).eventSourceARN);
    expect(a?.MessageDeduplicationId).toMatch(/^[0-9a-f]{64}$/);
    expect(b?.MessageDeduplicationId).toBe(a?.MessageDeduplicationId);
  });

  it('keeps the FIFO group id within 128 characters for a stream of a long table name', async () => {
    const start = sqs.calls.length;
    const sink = new SqsDeadLetterSink({
      client: sqsClient(sqs.endpoint),
      queueUrl: `${sqs.endpoint}/123456789012/dlq.fifo`,
    });
    // Table names may have 255 characters; SQS refuses a MessageGroupId over 128.
    const arn = `arn:aws:dynamodb:us-east-1:123456789012:table/${'x'.repeat(200)}/stream/2026-01-01T00:00:00.000`;
    await sink.send([entry(1, { eventSourceARN: arn }), entry(2, { eventSourceARN: arn })], {});
    const [a, b] = sqs.calls.slice(start).flatMap((c) => c.body.Entries);
    expect(a?.MessageGroupId).toMatch(/^[!-~]{1,128}$/);
    expect(b?.MessageGroupId).toBe(a?.MessageGroupId);
    expect(
      () => new SqsDeadLetterSink({ queueUrl: 'https://x/1/q.fifo', messageGroupId: 'g'.repeat(129) }),
    ).toThrow(/messageGroupId/);
    expect(() => new SqsDeadLetterSink({ queueUrl: 'https://x/1/q.fifo', messageGroupId: 'a b' })).toThrow(
      /messageGroupId/,
    );
  });

  it('throws a DeadLetterSendError naming every entry when the overflow PUT fails, and sends nothing', async () => {
    const overflow = new S3DeadLetterSink({ client: s3, bucket: 'no-such-bucket-tidewater' });
    const sink = new SqsDeadLetterSink({
      client: sqsClient(sqs.endpoint),
      queueUrl: `${sqs.endpoint}/1/dlq`,
      overflow,
    });
    const start = sqs.calls.length;
    const big = entry(9, { record: { eventID: 'ev-9', blob: 'x'.repeat(300_000) } });
    const error = await sink.send([entry(8), big], {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadLetterSendError);
    expect((error as DeadLetterSendError).sequenceNumbers).toEqual(['1008', '1009']);
    expect(((error as DeadLetterSendError).cause as Error).name).toBe('NoSuchBucket');
    expect(sqs.calls.length).toBe(start);
  });

  it('puts an entry over the size limit in S3 and sends a pointer', async () => {
    const bucket = await createTestBucket(s3);
    const overflow = new S3DeadLetterSink({ client: s3, bucket });
    const sink = new SqsDeadLetterSink({
      client: sqsClient(sqs.endpoint),
      queueUrl: `${sqs.endpoint}/1/dlq`,
      overflow,
    });
    const big = entry(9, { record: { eventID: 'ev-9', blob: 'x'.repeat(300_000) } });
    const start = sqs.calls.length;
    await sink.send([entry(8), big], {});
    const bodies = sqs.calls
      .slice(start)
      .flatMap((c) => c.body.Entries.map((e) => JSON.parse(e.MessageBody)));
    expect(bodies[0].type).toBe(DEAD_LETTER_TYPE);
    expect(bodies[1]).toMatchObject({ type: DEAD_LETTER_POINTER_TYPE, bucket, sequenceNumber: '1009' });
    expect(bodies[1].record).toBeUndefined();
    const stored = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: bodies[1].key }));
    const full = JSON.parse(
      await (stored.Body as { transformToString(): Promise<string> }).transformToString(),
    );
    expect(full.record.blob).toHaveLength(300_000);
  });

  it('throws naming the entry when it is too large and there is no overflow sink', async () => {
    const sink = new SqsDeadLetterSink({
      client: sqsClient(sqs.endpoint),
      queueUrl: `${sqs.endpoint}/1/dlq`,
    });
    const error = await sink.send([entry(7, { record: 'y'.repeat(270_000) })], {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadLetterSendError);
    expect((error as DeadLetterSendError).sequenceNumbers).toEqual(['1007']);
  });

  it('throws a DeadLetterSendError naming every unsent entry when the endpoint is down', async () => {
    const sink = new SqsDeadLetterSink({
      client: sqsClient('http://127.0.0.1:9'),
      queueUrl: 'http://127.0.0.1:9/1/dlq',
      entryRetries: 0,
    });
    const error = await sink
      .send(
        Array.from({ length: 12 }, (_, i) => entry(i)),
        {},
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadLetterSendError);
    expect((error as DeadLetterSendError).sequenceNumbers).toHaveLength(12);
  });

  it('validates options', () => {
    expect(() => new SqsDeadLetterSink({ queueUrl: 'q', queueURL: 'q' } as never)).toThrow(
      InvalidOptionsError,
    );
    expect(() => new SqsDeadLetterSink({ queueUrl: 'https://x/1/q', messageGroupId: 'g' })).toThrow(/FIFO/);
    expect(() => new SqsDeadLetterSink({ queueUrl: 'https://x/1/q', maxMessageBytes: 2_000_000 })).toThrow(
      /maxMessageBytes/,
    );
  });
});

describe('SqsDeadLetterSink against the local SQS server (SQS size limits enforced)', () => {
  const { s3 } = localClients();
  let local: Awaited<ReturnType<typeof startLocalSqs>>;
  let server: SqsServer;
  let client: SQSClient;
  let queueUrl: string;
  beforeAll(async () => {
    local = await startLocalSqs();
    ({ server, sqs: client } = local);
    queueUrl = (await client.send(new CreateQueueCommand({ QueueName: 'dlq-limits' }))).QueueUrl as string;
  });
  afterAll(() => local.stop());

  it('cuts SendMessageBatch calls by total size, so ten entries of 40 KB all arrive in order', async () => {
    // 10 x ~40 KB is over the 256 KiB a batch may carry: sent as one call, SQS refuses it.
    const entries = Array.from({ length: 10 }, (_, i) =>
      entry(100 + i, { record: { eventID: `ev-${100 + i}`, blob: 'b'.repeat(40_000) } }),
    );
    const sink = new SqsDeadLetterSink({ client, queueUrl });
    await sink.send(entries, {});
    const bodies = server.messages('dlq-limits').map((m) => JSON.parse(m.body));
    expect(bodies.map((b) => b.sequenceNumber)).toEqual(entries.map((e) => e.sequenceNumber));
    expect(bodies.every((b) => b.record.blob.length === 40_000)).toBe(true);
    await client.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
  });

  it('sends an entry over 256 KiB as a pointer to its S3 copy', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new SqsDeadLetterSink({
      client,
      queueUrl,
      overflow: new S3DeadLetterSink({ client: s3, bucket }),
    });
    const big = entry(200, { record: { eventID: 'ev-200', blob: 'z'.repeat(262_144) } });
    await sink.send([entry(199), big], {});
    const bodies = server.messages('dlq-limits').map((m) => JSON.parse(m.body));
    expect(bodies.map((b) => [b.type, b.sequenceNumber])).toEqual([
      [DEAD_LETTER_TYPE, '1199'],
      [DEAD_LETTER_POINTER_TYPE, '1200'],
    ]);
    const stored = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: bodies[1].key }));
    const full = JSON.parse(
      await (stored.Body as { transformToString(): Promise<string> }).transformToString(),
    );
    expect(full.record.blob).toHaveLength(262_144);
    await client.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
  });
});
