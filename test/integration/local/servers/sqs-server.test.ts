import { connect } from 'node:net';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../../../src/local/servers/dynamodb-local.js';
import type { SqsServer } from '../../../../src/local/servers/sqs-server.js';
import { startSqsServerOnFreePort } from '../../../support/aws.js';

describe('local SQS server through the real SQSClient', () => {
  let server: SqsServer;
  let sqs: SQSClient;
  beforeAll(async () => {
    server = await startSqsServerOnFreePort();
    sqs = new SQSClient({ endpoint: server.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  });
  afterAll(async () => {
    sqs.destroy();
    await server.stop();
  });

  it('sends, batches and receives with the SDK validating body MD5s', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'dlq' }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: '{"a":1}' }));
    const batch = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: [
          { Id: '1', MessageBody: 'one' },
          { Id: '2', MessageBody: 'two' },
        ],
      }),
    );
    expect(batch.Successful?.map((s) => s.Id)).toEqual(['1', '2']);
    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));
    expect(received.Messages?.map((m) => m.Body)).toEqual(['{"a":1}', 'one', 'two']);
    const attributes = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }));
    expect(attributes.Attributes?.QueueArn).toBe('arn:aws:sqs:us-east-1:000000000000:dlq');
    expect(server.messages('dlq')).toHaveLength(3);
  });

  it('enforces SQS limits: 10 entries a batch, 256 KiB a message', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'limits' }));
    const eleven = Array.from({ length: 11 }, (_, i) => ({ Id: String(i), MessageBody: 'x' }));
    await expect(sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries: eleven }))).rejects.toMatchObject({
      name: 'TooManyEntriesInBatchRequest',
    });
    await expect(
      sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x'.repeat(262_145) })),
    ).rejects.toMatchObject({
      name: 'InvalidParameterValue',
    });
    expect(server.messages('limits')).toHaveLength(0);
  });

  it('names a missing queue', async () => {
    await expect(
      sqs.send(
        new SendMessageCommand({ QueueUrl: `${server.endpoint}/000000000000/nope`, MessageBody: 'x' }),
      ),
    ).rejects.toMatchObject({ name: 'QueueDoesNotExist' });
  });

  /** One raw request: its status and body, as a hostile loopback client would send it. */
  async function raw(target: string, body: string | Buffer): Promise<{ status: number; text: string }> {
    const response = await fetch(server.endpoint, {
      method: 'POST',
      headers: { 'x-amz-target': target, 'content-type': 'application/x-amz-json-1.0' },
      body,
    }).catch((error: unknown) => ({ status: 0, text: async () => String(error) }));
    return { status: response.status, text: await response.text() };
  }

  it('answers hostile requests alone: a reset mid-body, prototype names, bodies not JSON objects, a flood', async () => {
    // A client that promises 1,000 bytes, sends 10 and resets: the server must not die with it.
    await new Promise<void>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write(
          'POST / HTTP/1.1\r\nhost: x\r\nx-amz-target: AmazonSQS.ListQueues\r\ncontent-length: 1000\r\n\r\n0123456789',
          () => {
            socket.resetAndDestroy();
            resolve();
          },
        );
      });
      socket.on('error', reject);
    });
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const answer = await raw(`AmazonSQS.${name}`, '{}');
      expect(answer.status, name).toBe(400);
      expect(answer.text, name).toContain('UnsupportedOperation');
    }
    for (const body of ['null', '[1]', '"text"', 'not json']) {
      const answer = await raw('AmazonSQS.ListQueues', body);
      expect(answer.status, body).toBe(400);
      expect(answer.text, body).toContain('InvalidParameterValue');
    }
    const flood = await raw('AmazonSQS.ListQueues', Buffer.alloc(3 * 1024 * 1024, 0x20));
    expect([0, 413]).toContain(flood.status);
    // Still serving.
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'after-hostile' }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'still here' }));
    expect(server.messages('after-hostile')).toHaveLength(1);
  });
});
