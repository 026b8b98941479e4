import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defineOptions } from '../../core/index.js';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from './dynamodb-local.js';
import { LocalServerStartError } from './errors.js';

/**
 * A small in-memory SQS server speaking the AWS JSON 1.0 protocol the current SDK uses, with
 * SQS's limits enforced (10 entries a batch, 256 KiB a message and a batch), so dead-letter and
 * on-failure paths run through the real SQSClient locally. No visibility timeouts or FIFO:
 * received messages stay hidden until deleted or released (ChangeMessageVisibility to 0, as
 * redrive does with what it keeps), which is all the local runtime needs.
 */
export interface SqsServer {
  readonly endpoint: string;
  readonly port: number;
  /** Messages currently in a queue (received or not), oldest first. For summaries and tests. */
  messages(queueName: string): readonly LocalSqsMessage[];
  stop(): Promise<void>;
}

/** A message held by the local SQS server, as SqsServer.messages() returns it. */
export interface LocalSqsMessage {
  readonly messageId: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly sentAt: number;
}

interface Queue {
  readonly name: string;
  readonly attributes: Record<string, string>;
  readonly messages: (LocalSqsMessage & { receiptHandle?: string })[];
}

const MAX_MESSAGE_BYTES = 262_144;
const MAX_BATCH_ENTRIES = 10;

class SqsFault extends Error {
  constructor(
    readonly code: string,
    readonly queryCode: string,
    message: string,
  ) {
    super(message);
  }
}

const readOptions = defineOptions<{ port?: number }>()('startSqsServer', {
  port: { kind: 'integer', min: 0, max: 65_535 },
});

/** Starts a local SQS server and returns its endpoint. */
export async function startSqsServer(input: { port?: number } = {}): Promise<SqsServer> {
  const options = readOptions(input);
  const queues = new Map<string, Queue>();
  // Port 0 lets the kernel pick a free port at bind time: no window for another process to take it.
  let port = options.port ?? 0;
  let endpoint = '';
  const queueUrl = (name: string) => `${endpoint}/${LOCAL_ACCOUNT_ID}/${name}`;

  const queueOf = (url: unknown): Queue => {
    const name = typeof url === 'string' ? url.slice(url.lastIndexOf('/') + 1) : '';
    const queue = queues.get(name);
    if (!queue)
      throw new SqsFault(
        'QueueDoesNotExist',
        'AWS.SimpleQueueService.NonExistentQueue',
        `queue ${String(url)} does not exist`,
      );
    return queue;
  };

  const enqueue = (queue: Queue, body: unknown, attributes: unknown) => {
    if (typeof body !== 'string' || body.length === 0)
      throw new SqsFault('InvalidParameterValue', 'InvalidParameterValue', 'MessageBody is required');
    const bytes = Buffer.byteLength(body) + attributeBytes(attributes);
    if (bytes > MAX_MESSAGE_BYTES) {
      throw new SqsFault(
        'InvalidParameterValue',
        'InvalidParameterValue',
        `message is ${bytes} bytes, over the ${MAX_MESSAGE_BYTES} limit`,
      );
    }
    const message = {
      messageId: randomUUID(),
      body,
      attributes: (attributes ?? {}) as Record<string, unknown>,
      sentAt: Date.now(),
    };
    queue.messages.push(message);
    return { MessageId: message.messageId, MD5OfMessageBody: md5(body) };
  };

  const operations: Record<string, (input: Record<string, unknown>) => unknown> = {
    CreateQueue(input) {
      const name = String(input.QueueName ?? '');
      if (!/^[A-Za-z0-9_-]{1,80}(\.fifo)?$/.test(name))
        throw new SqsFault('InvalidParameterValue', 'InvalidParameterValue', `bad queue name ${name}`);
      if (!queues.has(name)) {
        queues.set(name, {
          name,
          attributes: { ...((input.Attributes as Record<string, string>) ?? {}) },
          messages: [],
        });
      }
      return { QueueUrl: queueUrl(name) };
    },
    GetQueueUrl(input) {
      return { QueueUrl: queueUrl(queueOf(`/${String(input.QueueName)}`).name) };
    },
    ListQueues() {
      return { QueueUrls: [...queues.keys()].map(queueUrl) };
    },
    GetQueueAttributes(input) {
      const queue = queueOf(input.QueueUrl);
      return {
        Attributes: {
          ...queue.attributes,
          QueueArn: `arn:aws:sqs:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:${queue.name}`,
          ApproximateNumberOfMessages: String(queue.messages.filter((m) => !m.receiptHandle).length),
          ApproximateNumberOfMessagesNotVisible: String(queue.messages.filter((m) => m.receiptHandle).length),
        },
      };
    },
    SendMessage(input) {
      return enqueue(queueOf(input.QueueUrl), input.MessageBody, input.MessageAttributes);
    },
    SendMessageBatch(input) {
      const queue = queueOf(input.QueueUrl);
      const entries = Array.isArray(input.Entries) ? (input.Entries as Record<string, unknown>[]) : [];
      if (entries.length === 0)
        throw new SqsFault('EmptyBatchRequest', 'AWS.SimpleQueueService.EmptyBatchRequest', 'no entries');
      if (entries.length > MAX_BATCH_ENTRIES) {
        throw new SqsFault(
          'TooManyEntriesInBatchRequest',
          'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
          `${entries.length} entries, at most ${MAX_BATCH_ENTRIES}`,
        );
      }
      const total = entries.reduce(
        (sum, e) =>
          sum + Buffer.byteLength(String(e.MessageBody ?? '')) + attributeBytes(e.MessageAttributes),
        0,
      );
      if (total > MAX_MESSAGE_BYTES) {
        throw new SqsFault(
          'BatchRequestTooLong',
          'AWS.SimpleQueueService.BatchRequestTooLong',
          `batch is ${total} bytes, over ${MAX_MESSAGE_BYTES}`,
        );
      }
      const Successful: unknown[] = [];
      const Failed: unknown[] = [];
      for (const entry of entries) {
        try {
          Successful.push({ Id: entry.Id, ...enqueue(queue, entry.MessageBody, entry.MessageAttributes) });
        } catch (error) {
          Failed.push({
            Id: entry.Id,
            SenderFault: true,
            Code: (error as SqsFault).code,
            Message: (error as Error).message,
          });
        }
      }
      return { Successful, Failed };
    },
    ReceiveMessage(input) {
      const queue = queueOf(input.QueueUrl);
      const max = Math.min(Number(input.MaxNumberOfMessages ?? 1), 10);
      const Messages = [];
      for (const message of queue.messages) {
        if (Messages.length >= max) break;
        if (message.receiptHandle) continue;
        message.receiptHandle = randomUUID();
        Messages.push({
          MessageId: message.messageId,
          ReceiptHandle: message.receiptHandle,
          Body: message.body,
          MD5OfBody: md5(message.body),
        });
      }
      return { Messages };
    },
    DeleteMessage(input) {
      const queue = queueOf(input.QueueUrl);
      const at = queue.messages.findIndex((m) => m.receiptHandle === input.ReceiptHandle);
      if (at >= 0) queue.messages.splice(at, 1);
      return {};
    },
    // Only a timeout of 0 (release now) matters locally: received messages otherwise stay hidden.
    ChangeMessageVisibility(input) {
      const message = queueOf(input.QueueUrl).messages.find((m) => m.receiptHandle === input.ReceiptHandle);
      if (message && Number(input.VisibilityTimeout) === 0) message.receiptHandle = undefined;
      return {};
    },
    PurgeQueue(input) {
      queueOf(input.QueueUrl).messages.length = 0;
      return {};
    },
  };

  const server: Server = createServer((request, response) => {
    // A client that resets mid-body (or any fault reading it) ends that request alone: an
    // unhandled rejection here would take `tidewater start` down with it.
    handle(request, response).catch(() => response.destroy());
  });
  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of request) {
      bytes += (chunk as Buffer).length;
      if (bytes > MAX_REQUEST_BYTES) {
        response.statusCode = 413;
        response.setHeader('connection', 'close');
        response.end();
        request.destroy();
        return;
      }
      chunks.push(chunk as Buffer);
    }
    const target = String(request.headers['x-amz-target'] ?? '');
    const name = target.replace(/^AmazonSQS\./, '');
    // Own entries only: `constructor`, `toString` or `__proto__` name no operation.
    const operation = Object.hasOwn(operations, name) ? operations[name] : undefined;
    response.setHeader('content-type', 'application/x-amz-json-1.0');
    response.setHeader('x-amzn-requestid', randomUUID());
    try {
      if (!operation)
        throw new SqsFault(
          'UnsupportedOperation',
          'AWS.SimpleQueueService.UnsupportedOperation',
          `unsupported operation ${target}`,
        );
      const input = chunks.length ? parseBody(Buffer.concat(chunks).toString('utf8')) : {};
      if (input === null || typeof input !== 'object' || Array.isArray(input))
        throw new SqsFault(
          'InvalidParameterValue',
          'InvalidParameterValue',
          'the request body is not a JSON object',
        );
      response.end(JSON.stringify(operation(input as Record<string, unknown>)));
    } catch (error) {
      const fault =
        error instanceof SqsFault ? error : new SqsFault('InternalError', 'InternalError', String(error));
      response.statusCode = fault.code === 'InternalError' ? 500 : 400;
      response.setHeader('x-amzn-query-error', `${fault.queryCode};Sender`);
      response.end(JSON.stringify({ __type: `com.amazonaws.sqs#${fault.code}`, message: fault.message }));
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new LocalServerStartError('SQS server', String(error))));
    server.listen(port, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  endpoint = `http://127.0.0.1:${port}`;

  return {
    endpoint,
    port,
    messages: (name) => [...(queues.get(name)?.messages ?? [])],
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new SqsFault('InvalidParameterValue', 'InvalidParameterValue', 'the request body is not JSON');
  }
}

/** SQS takes at most 1 MiB a message and a batch; twice that leaves room for the JSON around it. */
const MAX_REQUEST_BYTES = 2 * 1024 * 1024;

function md5(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

/** SQS counts attribute names, types and values toward the message size. */
function attributeBytes(attributes: unknown): number {
  if (!attributes || typeof attributes !== 'object') return 0;
  let bytes = 0;
  for (const [name, value] of Object.entries(attributes as Record<string, Record<string, unknown>>)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(String(value.DataType ?? ''));
    bytes += Buffer.byteLength(String(value.StringValue ?? value.BinaryValue ?? ''));
  }
  return bytes;
}
