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
});
