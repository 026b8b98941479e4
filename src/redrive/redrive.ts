import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { KinesisClient } from '@aws-sdk/client-kinesis';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { defineOptions } from '../core/options.js';
import { kinesisStreamRegion } from '../records/kinesis-stream-arn.js';
import { RedriveInvokeError, RedriveMessageError, StreamRangeExpiredError } from './errors.js';
import { decodeRedriveMessage, type RedriveMessage, type RedriveRecord } from './message.js';
import { type KinesisApi, readKinesisRange } from './read-kinesis-range.js';
import { readStreamRange, type StreamsApi } from './read-range.js';
import { emptyReport, type RedriveItem, type RedriveReport } from './report.js';
import type { RedriveTarget } from './target.js';

/** Options of redrive: the stream, the on-failure sources, the target and a dry run. */
export interface RedriveOptions {
  /**
   * The stream whose failed batches are redriven — a table's DynamoDB stream, or the Kinesis data
   * stream its changes are streamed to (`arn:aws:kinesis:…`) — messages naming another stream are refused.
   */
  streamArn: string;
  /** Where the records run: handlerTarget(...) or lambdaTarget(...). */
  target: RedriveTarget;
  /** An SQS queue holding on-failure records (raw or SNS-delivered) or SqsDeadLetterSink entries. */
  queueUrl?: string;
  /** A bucket holding S3 on-failure objects or S3DeadLetterSink entries, read under `prefix`. */
  bucket?: string;
  /** Key prefix in `bucket`; default all keys (`aws/lambda/<mapping UUID>/` for an on-failure destination). */
  prefix?: string;
  /** Print what would be redriven; nothing is invoked or removed. Default false. */
  dryRun?: boolean;
  /** Seconds a received message stays hidden while its records run. Default 300. */
  visibilityTimeoutSeconds?: number;
  /** ReceiveMessage long-poll wait; default 1 (SQS's short poll may miss messages). */
  waitTimeSeconds?: number;
  /** Clients; default ones built from the environment (AWS_ENDPOINT_URL_* apply). */
  streams?: StreamsApi;
  /** For on-failure records of a Kinesis-triggered function (KinesisBatchInfo): the ranges are read from it. */
  kinesis?: KinesisApi;
  sqs?: Pick<SQSClient, 'send'>;
  s3?: Pick<S3Client, 'send'>;
  /** Called after each message, with what was (or would be) redriven. */
  onItem?: (item: RedriveItem) => void;
  signal?: AbortSignal;
}

const readOptions = /* @__PURE__ */ defineOptions<RedriveOptions>()('redrive', {
  streamArn: { kind: 'nonEmptyString', required: true },
  target: { kind: 'object', required: true, methods: ['run'], expected: 'a RedriveTarget' },
  queueUrl: { kind: 'nonEmptyString' },
  bucket: { kind: 'nonEmptyString' },
  prefix: { kind: 'string', default: '' },
  dryRun: { kind: 'boolean', default: false },
  visibilityTimeoutSeconds: { kind: 'integer', min: 0, max: 43_200, default: 300 },
  waitTimeSeconds: { kind: 'integer', min: 0, max: 20, default: 1 },
  streams: { kind: 'client' },
  kinesis: { kind: 'client' },
  sqs: { kind: 'client' },
  s3: { kind: 'client' },
  onItem: { kind: 'function' },
  signal: { kind: 'object', methods: ['addEventListener'], expected: 'an AbortSignal' },
});

type Resolved = ReturnType<typeof readOptions>;

/**
 * Redrives a stream's failed batches: reads each on-failure record or dead-letter entry from the
 * queue and / or bucket, gets its records (read back from the stream for an on-failure record),
 * runs them through the target, and removes the message only once every record succeeded. A
 * message that fails, names another stream or cannot be read is left in place and reported.
 */
export async function redrive(options: RedriveOptions): Promise<RedriveReport> {
  const o = readOptions(options);
  if (o.queueUrl === undefined && o.bucket === undefined)
    throw readOptions.fail('give a queueUrl, a bucket, or both', 'queueUrl');
  const report = emptyReport(o.dryRun);
  let kinesis = o.kinesis;
  const clients: Clients = {
    streams: o.streams ?? new DynamoDBStreamsClient({}),
    kinesis: () => {
      kinesis ??= defaultKinesisClient(o.streamArn);
      return kinesis;
    },
    s3: o.s3 ?? (o.bucket !== undefined ? new S3Client({}) : undefined),
  };
  if (o.queueUrl !== undefined) await fromQueue(o, o.queueUrl, o.sqs ?? new SQSClient({}), clients, report);
  if (o.bucket !== undefined)
    await fromBucket(o, o.bucket, clients.s3 as Pick<S3Client, 'send'>, clients, report);
  return report;
}

interface Clients {
  streams: StreamsApi;
  /** Made when a Kinesis range is first read: a DynamoDB stream's redrive never needs one. */
  kinesis: () => KinesisApi;
  s3: Pick<S3Client, 'send'> | undefined;
}

/**
 * A client in the stream's region. HTTP/1.1: GetShardIterator and GetRecords need nothing of the
 * client's HTTP/2 default (that is for SubscribeToShard), and a Kinesis-compatible local server
 * (AWS_ENDPOINT_URL_KINESIS) may speak HTTP/1.1 only.
 */
function defaultKinesisClient(streamArn: string): KinesisApi {
  return new KinesisClient({ region: kinesisStreamRegion(streamArn), requestHandler: new NodeHttpHandler() });
}

async function fromQueue(
  o: Resolved,
  queueUrl: string,
  sqs: Pick<SQSClient, 'send'>,
  clients: Clients,
  report: RedriveReport,
): Promise<void> {
  // Kept messages are released at the end, not at once: a receive would hand them back in this
  // run. One still comes back after its visibility timeout: seen ids end the run.
  const seen = new Set<string>();
  const kept: string[] = [];
  try {
    for (;;) {
      const page = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: o.waitTimeSeconds,
          VisibilityTimeout: o.visibilityTimeoutSeconds,
        }),
        { abortSignal: o.signal },
      );
      const fresh = (page.Messages ?? []).filter((m) => !seen.has(m.MessageId ?? ''));
      if (fresh.length === 0) return;
      for (const message of fresh) {
        seen.add(message.MessageId ?? '');
        const removed = await handle(
          o,
          clients,
          report,
          `sqs:${message.MessageId}`,
          message.Body ?? '',
          async () => {
            await sqs.send(
              new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }),
              {
                abortSignal: o.signal,
              },
            );
          },
        );
        if (!removed && message.ReceiptHandle !== undefined) kept.push(message.ReceiptHandle);
      }
    }
  } finally {
    // Visible again now, so a rerun (or the other stream's redrive) finds them without waiting.
    for (const receiptHandle of kept)
      await sqs
        .send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: queueUrl,
            ReceiptHandle: receiptHandle,
            VisibilityTimeout: 0,
          }),
        )
        .catch(() => undefined);
  }
}

async function fromBucket(
  o: Resolved,
  bucket: string,
  s3: Pick<S3Client, 'send'>,
  clients: Clients,
  report: RedriveReport,
): Promise<void> {
  let token: string | undefined;
  do {
    const page: ListObjectsV2CommandOutput = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: o.prefix, ContinuationToken: token }),
      { abortSignal: o.signal },
    );
    for (const object of page.Contents ?? []) {
      const key = object.Key as string;
      const text = await objectText(s3, bucket, key, o.signal);
      // The object is the only copy of the failure: deleted after success, kept otherwise.
      await handle(o, clients, report, `s3://${bucket}/${key}`, text, () =>
        deleteObject(s3, bucket, key, o.signal),
      );
    }
    token = page.NextContinuationToken;
  } while (token !== undefined);
}

async function objectText(
  s3: Pick<S3Client, 'send'>,
  bucket: string,
  key: string,
  signal: AbortSignal | undefined,
): Promise<string> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal });
  return (await object.Body?.transformToString('utf8')) ?? '';
}

async function deleteObject(
  s3: Pick<S3Client, 'send'>,
  bucket: string,
  key: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal });
}

/** What a message asks to redrive: its records, and what else goes once they succeed. */
interface Work {
  item: RedriveItem;
  records: RedriveRecord[];
  /** A pointer's overflow object, removed with its message. */
  alsoRemove?: () => Promise<void>;
}

async function workOf(o: Resolved, clients: Clients, source: string, message: RedriveMessage): Promise<Work> {
  if (message.kind === 'on-failure') {
    const info = message.info;
    // An S3 destination's object holds the batch itself: no stream read, and no expiry.
    const records =
      message.records ??
      (message.source === 'kinesis'
        ? await readKinesisRange(clients.kinesis(), info, o.signal)
        : await readStreamRange(clients.streams, info, o.signal));
    const item: RedriveItem = {
      source,
      kind: 'on-failure',
      shardId: info.shardId,
      startSequenceNumber: info.startSequenceNumber,
      endSequenceNumber: info.endSequenceNumber,
      records: records.length,
    };
    return { item, records };
  }
  if (message.kind === 'dead-letter') {
    return {
      item: { source, kind: 'dead-letter', records: message.records.length },
      records: message.records as RedriveRecord[],
    };
  }
  const s3 = clients.s3 ?? new S3Client({});
  const text = await objectText(s3, message.bucket, message.key, o.signal);
  const inner = decodeRedriveMessage(text, `s3://${message.bucket}/${message.key}`, o.streamArn);
  if (inner.kind !== 'dead-letter')
    throw new RedriveMessageError(
      'malformed',
      source,
      'the pointer names an object that is not a dead-letter entry',
    );
  return {
    item: { source, kind: 'dead-letter', records: inner.records.length },
    records: inner.records as RedriveRecord[],
    alsoRemove: () => deleteObject(s3, message.bucket, message.key, o.signal),
  };
}

async function handle(
  o: Resolved,
  clients: Clients,
  report: RedriveReport,
  source: string,
  text: string,
  remove: () => Promise<void>,
): Promise<boolean> {
  report.messagesRead++;
  let work: Work;
  try {
    work = await workOf(o, clients, source, decodeRedriveMessage(text, source, o.streamArn));
  } catch (error) {
    if (error instanceof RedriveMessageError) report.errors.push(error);
    else if (error instanceof StreamRangeExpiredError) report.rangesExpired.push(error);
    else throw error;
    return false;
  }
  report.items.push(work.item);
  report.recordsRedriven += work.records.length;
  o.onItem?.(work.item);
  if (o.dryRun) return false;
  let outcome: Awaited<ReturnType<RedriveTarget['run']>>;
  try {
    outcome = await o.target.run(work.records);
  } catch (error) {
    if (!(error instanceof RedriveInvokeError)) throw error;
    report.errors.push(error);
    report.failed += work.records.length;
    return false;
  }
  report.failed += outcome.failed.length;
  report.succeeded += work.records.length - outcome.failed.length;
  if (outcome.failed.length > 0) {
    report.failures.push({ source, sequenceNumbers: outcome.failed, error: outcome.error });
    return false;
  }
  await remove();
  await work.alsoRemove?.();
  report.messagesRemoved++;
  return true;
}
