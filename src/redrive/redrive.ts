import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { KinesisClient } from '@aws-sdk/client-kinesis';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
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
import { describeError } from '../core/errors.js';
import { defineOptions } from '../core/options.js';
import { kinesisStreamRegion } from '../records/kinesis-stream-arn.js';
import { RedriveInvokeError, RedriveMessageError, StreamRangeExpiredError } from './errors.js';
import { RunLedger } from './ledger.js';
import { decodeRedriveMessage, type RedriveMessage, type RedriveRecord } from './message.js';
import { type KinesisApi, readKinesisRange } from './read-kinesis-range.js';
import { readStreamRange, type StreamsApi } from './read-range.js';
import {
  emptyReport,
  type KeptReason,
  type RedriveItem,
  type RedriveProgress,
  type RedriveReport,
  type StopReason,
} from './report.js';
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
  /**
   * Where an SqsDeadLetterSink entry's S3 pointer may lead: its overflow bucket. A pointer to any
   * other bucket, or outside `pointerPrefix`, is refused (the object is neither read nor deleted)
   * and its message kept. Without it, every pointer is refused.
   */
  pointerBucket?: string;
  /** Key prefix a pointer's key must start with in `pointerBucket`; default all keys. */
  pointerPrefix?: string;
  /** Messages (and objects) read in one run, at most; default 1000. */
  maxMessages?: number;
  /**
   * Seconds after which no further message is read; default 240. Below `visibilityTimeoutSeconds`
   * when a queue is read: succeeded messages are removed when the run ends, by their receipt.
   */
  maxSeconds?: number;
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
  /** Called after each message read, with the counts so far. */
  onProgress?: (progress: RedriveProgress) => void;
  signal?: AbortSignal;
}

const readOptions = /* @__PURE__ */ defineOptions<RedriveOptions>()('redrive', {
  streamArn: { kind: 'nonEmptyString', required: true },
  target: { kind: 'object', required: true, methods: ['run'], expected: 'a RedriveTarget' },
  queueUrl: { kind: 'nonEmptyString' },
  bucket: { kind: 'nonEmptyString' },
  prefix: { kind: 'string', default: '' },
  pointerBucket: { kind: 'nonEmptyString' },
  pointerPrefix: { kind: 'string', default: '' },
  maxMessages: { kind: 'integer', min: 1, max: 1_000_000, default: 1000 },
  maxSeconds: { kind: 'integer', min: 1, max: 43_200, default: 240 },
  dryRun: { kind: 'boolean', default: false },
  visibilityTimeoutSeconds: { kind: 'integer', min: 0, max: 43_200, default: 300 },
  waitTimeSeconds: { kind: 'integer', min: 0, max: 20, default: 1 },
  streams: { kind: 'client' },
  kinesis: { kind: 'client' },
  sqs: { kind: 'client' },
  s3: { kind: 'client' },
  onItem: { kind: 'function' },
  onProgress: { kind: 'function' },
  signal: { kind: 'object', methods: ['addEventListener'], expected: 'an AbortSignal' },
});

type Resolved = ReturnType<typeof readOptions>;

/**
 * Redrives a stream's failed batches: reads each on-failure record or dead-letter entry from the
 * queue and / or bucket, gets its records (read back from the stream for an on-failure record),
 * runs them through the target, and removes the message when the run ends, once every record
 * succeeded and none came back dead-lettered. A message that fails, names another stream or cannot
 * be read is left in place and reported. A run reads at most `maxMessages` for `maxSeconds`.
 */
export async function redrive(options: RedriveOptions): Promise<RedriveReport> {
  const o = readOptions(options);
  if (o.queueUrl === undefined && o.bucket === undefined)
    throw readOptions.fail('give a queueUrl, a bucket, or both', 'queueUrl');
  if (o.queueUrl !== undefined && !o.dryRun && o.maxSeconds >= o.visibilityTimeoutSeconds)
    throw readOptions.fail(
      `maxSeconds (${o.maxSeconds}) must be below visibilityTimeoutSeconds (${o.visibilityTimeoutSeconds}): ` +
        'messages are removed when the run ends, while still hidden',
      'maxSeconds',
    );
  let kinesis = o.kinesis;
  const run: Run = {
    o,
    clients: {
      streams: o.streams ?? new DynamoDBStreamsClient({}),
      kinesis: () => {
        kinesis ??= defaultKinesisClient(o.streamArn);
        return kinesis;
      },
      s3: o.s3 ?? (o.bucket !== undefined || o.pointerBucket !== undefined ? new S3Client({}) : undefined),
    },
    report: emptyReport(o.dryRun),
    ledger: new RunLedger(),
    startedAt: Date.now(),
  };
  if (o.queueUrl !== undefined) await fromQueue(run, o.queueUrl, o.sqs ?? new SQSClient({}));
  if (o.bucket !== undefined && run.report.stopped === undefined)
    await fromBucket(run, o.bucket, run.clients.s3 as Pick<S3Client, 'send'>);
  await removeSucceeded(run);
  return run.report;
}

/** One run's options, clients, report and ledger. */
interface Run {
  o: Resolved;
  clients: Clients;
  report: RedriveReport;
  ledger: RunLedger;
  startedAt: number;
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

/** Whether the run may read another message; sets `stopped` when a bound is reached. */
function mayRead(run: Run): boolean {
  if (run.report.stopped !== undefined) return false;
  const stop: StopReason | undefined =
    run.report.messagesRead >= run.o.maxMessages
      ? 'max-messages'
      : Date.now() - run.startedAt >= run.o.maxSeconds * 1000
        ? 'max-seconds'
        : undefined;
  run.report.stopped = stop;
  return stop === undefined;
}

async function fromQueue(run: Run, queueUrl: string, sqs: Pick<SQSClient, 'send'>): Promise<void> {
  const { o } = run;
  // Messages not removed are released at the end, not at once: a receive would hand them back in
  // this run. One still comes back after its visibility timeout: seen ids end the run.
  const seen = new Set<string>();
  const release: string[] = [];
  try {
    while (mayRead(run)) {
      const page = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: Math.min(10, o.maxMessages - run.report.messagesRead),
          WaitTimeSeconds: o.waitTimeSeconds,
          VisibilityTimeout: o.visibilityTimeoutSeconds,
        }),
        { abortSignal: o.signal },
      );
      const fresh = (page.Messages ?? []).filter((m) => !seen.has(m.MessageId ?? ''));
      if (fresh.length === 0) return;
      for (const message of fresh) {
        seen.add(message.MessageId ?? '');
        const receipt = message.ReceiptHandle;
        if (!mayRead(run)) {
          if (receipt !== undefined) release.push(receipt);
          continue;
        }
        const remove = () =>
          sqs
            .send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: receipt }))
            .then(() => undefined);
        const pending = await handle(run, `sqs:${message.MessageId}`, message.Body ?? '', {
          remove,
          // A message taken back from removal (dead-lettered again) is released with the rest.
          release: () => {
            if (receipt !== undefined) release.push(receipt);
          },
        });
        if (!pending && receipt !== undefined) release.push(receipt);
      }
    }
  } finally {
    // Visible again now, so a rerun (or the other stream's redrive) finds them without waiting;
    // a message taken back from removal at the run's end was too late for this list.
    await removeSucceeded(run);
    for (const receiptHandle of release)
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

async function fromBucket(run: Run, bucket: string, s3: Pick<S3Client, 'send'>): Promise<void> {
  const { o } = run;
  const seen = new Set<string>();
  // A dead-letter sink writing into the bucket being read adds keys while the run lists it:
  // listed again until a listing shows nothing new, each new object read as a message.
  let found = true;
  while (found && mayRead(run)) {
    found = false;
    let token: string | undefined;
    do {
      const page: ListObjectsV2CommandOutput = await s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: o.prefix, ContinuationToken: token }),
        { abortSignal: o.signal },
      );
      for (const object of page.Contents ?? []) {
        const key = object.Key as string;
        if (seen.has(key)) continue;
        if (!mayRead(run)) return;
        seen.add(key);
        found = true;
        await fromObject(run, s3, bucket, key);
      }
      token = page.NextContinuationToken;
    } while (token !== undefined);
    if (o.dryRun) return;
  }
}

/** One listed object as a message: the object is the only copy of the failure, deleted after success. */
async function fromObject(run: Run, s3: Pick<S3Client, 'send'>, bucket: string, key: string): Promise<void> {
  const source = `s3://${bucket}/${key}`;
  let read: ObjectRead;
  try {
    read = await readObject(s3, bucket, key, source, run.o.signal);
  } catch (error) {
    run.report.messagesRead++;
    keep(run, source, problemOf(run, source, error));
    progress(run);
    return;
  }
  await handle(run, source, read.text, {
    remove: () => deleteObject(s3, bucket, key),
    unchanged: () => sameObject(s3, bucket, key, read),
  });
}

/** Bytes of an S3 object redrive reads as a message: an on-failure object holds one invocation's payload (6 MB) as JSON text. */
const MAX_OBJECT_BYTES = 16 * 1024 * 1024;

interface ObjectRead {
  text: string;
  etag: string | undefined;
}

async function readObject(
  s3: Pick<S3Client, 'send'>,
  bucket: string,
  key: string,
  source: string,
  signal: AbortSignal | undefined,
): Promise<ObjectRead> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal });
  // An object that does not say its length could be any length: read only what says it fits.
  if (object.ContentLength === undefined || object.ContentLength > MAX_OBJECT_BYTES) {
    await object.Body?.transformToWebStream().cancel();
    throw new RedriveMessageError(
      'too-large',
      source,
      object.ContentLength === undefined
        ? `its length is not given; redrive reads at most ${MAX_OBJECT_BYTES} bytes`
        : `${object.ContentLength} bytes, more than the ${MAX_OBJECT_BYTES} redrive reads`,
    );
  }
  return { text: (await object.Body?.transformToString('utf8')) ?? '', etag: object.ETag };
}

/** Whether the object is still the one read: a rewrite (the same record dead-lettered again) changes its ETag. */
async function sameObject(
  s3: Pick<S3Client, 'send'>,
  bucket: string,
  key: string,
  read: ObjectRead,
): Promise<boolean> {
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return read.etag !== undefined && head.ETag === read.etag;
  } catch {
    return false;
  }
}

async function deleteObject(s3: Pick<S3Client, 'send'>, bucket: string, key: string): Promise<void> {
  await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
}

/** What a message asks to redrive: its records, and what else goes once they succeed. */
interface Work {
  item: RedriveItem;
  records: RedriveRecord[];
  /** A pointer's overflow object, removed with its message. */
  alsoRemove?: () => Promise<void>;
  /** Whether the pointer's overflow object is still the one read. */
  unchanged?: () => Promise<boolean>;
  /** A dead-letter entry's `at`: only an entry made during the run can be the run's own copy. */
  madeAt?: number | undefined;
}

async function workOf(run: Run, source: string, message: RedriveMessage): Promise<Work> {
  const { o, clients } = run;
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
  if (message.kind === 'dead-letter')
    return {
      item: { source, kind: 'dead-letter', records: message.records.length },
      records: message.records,
      madeAt: message.madeAt,
    };
  const { bucket, key } = message;
  // A pointer is the message's claim, not the run's: followed only into the overflow bucket and
  // prefix redrive was given, so a forged one can make it read or delete nothing else.
  if (o.pointerBucket === undefined || bucket !== o.pointerBucket || !key.startsWith(o.pointerPrefix))
    throw new RedriveMessageError(
      'pointer-outside',
      source,
      o.pointerBucket === undefined
        ? 'a dead-letter pointer, and no pointer bucket was given (pointerBucket, --pointer-bucket)'
        : `the pointer leads outside s3://${o.pointerBucket}/${o.pointerPrefix}`,
    );
  const s3 = clients.s3 as Pick<S3Client, 'send'>;
  const objectSource = `s3://${bucket}/${key}`;
  const read = await readObject(s3, bucket, key, objectSource, o.signal);
  const inner = decodeRedriveMessage(read.text, objectSource, o.streamArn);
  if (inner.kind !== 'dead-letter')
    throw new RedriveMessageError(
      'malformed',
      source,
      'the pointer names an object that is not a dead-letter entry',
    );
  return {
    item: { source, kind: 'dead-letter', records: inner.records.length },
    records: inner.records,
    alsoRemove: () => deleteObject(s3, bucket, key),
    unchanged: () => sameObject(s3, bucket, key, read),
    madeAt: inner.madeAt,
  };
}

/**
 * Whether a dead-letter entry was made while this run ran: its `at` no earlier than the run's
 * start, less a minute for a deployed function's clock. An entry that says no time could be
 * anyone's, and is taken as the run's own (the safe side: kept, the run ended).
 */
function madeDuringRun(run: Run, madeAt: number | undefined): boolean {
  return madeAt === undefined || madeAt >= run.startedAt - CLOCK_SKEW_MS;
}

const CLOCK_SKEW_MS = 60_000;

/** Why a message could not be used, as the report keeps it; an abort of the run is no message's fault. */
function problemOf(run: Run, source: string, error: unknown): { reason: KeptReason; error: Error } {
  if (run.o.signal?.aborted) throw error;
  if (error instanceof StreamRangeExpiredError) {
    run.report.rangesExpired.push(error);
    return { reason: 'expired', error };
  }
  const problem =
    error instanceof RedriveMessageError
      ? error
      : new RedriveMessageError('unreadable', source, describeError(error), { cause: error });
  run.report.errors.push(problem);
  return { reason: 'refused', error: problem };
}

function keep(run: Run, source: string, why: { reason: KeptReason; error?: Error; detail?: string }): void {
  if (run.o.dryRun) return;
  run.report.kept.push({ source, reason: why.reason, detail: why.detail ?? why.error?.message ?? '' });
}

function progress(run: Run): void {
  const r = run.report;
  run.o.onProgress?.({
    messagesRead: r.messagesRead,
    recordsRedriven: r.recordsRedriven,
    succeeded: r.succeeded,
    failed: r.failed,
    kept: r.kept.length,
    elapsedSeconds: (Date.now() - run.startedAt) / 1000,
  });
}

/**
 * Reads, runs and books one message. True when it is to be removed at the end of the run; a kept
 * message (false) is reported with why.
 */
async function handle(run: Run, source: string, text: string, place: Place): Promise<boolean> {
  run.report.messagesRead++;
  try {
    return await handleRead(run, source, text, place);
  } finally {
    progress(run);
  }
}

/** Where a message is: how to remove it, check it is unchanged, and release it when kept after all. */
interface Place {
  remove(): Promise<void>;
  unchanged?: () => Promise<boolean>;
  release?: () => void;
}

async function handleRead(run: Run, source: string, text: string, place: Place): Promise<boolean> {
  const { o, report, ledger } = run;
  let work: Work;
  try {
    work = await workOf(run, source, decodeRedriveMessage(text, source, o.streamArn));
  } catch (error) {
    keep(run, source, problemOf(run, source, error));
    return false;
  }
  // Only the function's dead-letter sink writes while redrive runs it: an on-failure record comes
  // from Lambda's mapping, and two of one batch are at-least-once delivery, not a copy.
  // An entry made before the run (a sink's retried send, a queue's own duplicate) is an old copy,
  // run again like any message: only one made while the run ran can be the function's doing.
  const earlier =
    o.dryRun || work.item.kind !== 'dead-letter' || !madeDuringRun(run, work.madeAt)
      ? undefined
      : ledger.earlierSourceOf(work.records);
  if (earlier !== undefined) {
    await deadLetteredAgain(run, earlier, `its record came back as ${source}, which was removed`);
    // This copy is the run's own doing: the kept original stands for the record. Its pointer's
    // object, if any, is the original's too (one key per entry) and stays.
    return removeOrReport(run, source, () => place.remove());
  }
  report.items.push(work.item);
  report.recordsRedriven += work.records.length;
  o.onItem?.(work.item);
  if (o.dryRun) return false;
  ledger.ran(source, work.records);
  let outcome: Awaited<ReturnType<RedriveTarget['run']>>;
  try {
    outcome = await o.target.run(work.records);
  } catch (error) {
    if (!(error instanceof RedriveInvokeError)) throw error;
    report.errors.push(error);
    report.failed += work.records.length;
    keep(run, source, { reason: 'failed', error });
    return false;
  }
  report.failed += outcome.failed.length;
  report.succeeded += work.records.length - outcome.failed.length;
  if (outcome.failed.length > 0) {
    report.failures.push({ source, sequenceNumbers: outcome.failed, error: outcome.error });
    keep(run, source, {
      reason: 'failed',
      detail: `${outcome.failed.length} of ${work.records.length} records failed${outcome.error ? ` (${outcome.error})` : ''}`,
    });
    return false;
  }
  const checks = [place.unchanged, work.unchanged].filter((c) => c !== undefined);
  ledger.succeeded({
    source,
    records: work.records.length,
    remove: async () => {
      await place.remove();
      await work.alsoRemove?.();
    },
    ...(place.release === undefined ? {} : { release: place.release }),
    ...(checks.length === 0
      ? {}
      : { unchanged: async () => (await Promise.all(checks.map((c) => c()))).every(Boolean) }),
  });
  return true;
}

/** `source`'s records came back dead-lettered: it is kept, counted failed, and the run ends. */
async function deadLetteredAgain(run: Run, source: string, detail: string): Promise<void> {
  const withdrawn = run.ledger.withdraw(source);
  if (withdrawn !== undefined) {
    run.report.succeeded -= withdrawn.records;
    run.report.failed += withdrawn.records;
    withdrawn.release?.();
  }
  run.report.kept.push({ source, reason: 'dead-lettered-again', detail });
  run.report.stopped = 'dead-lettered-again';
}

async function removeOrReport(run: Run, source: string, remove: () => Promise<void>): Promise<boolean> {
  try {
    await remove();
    return true;
  } catch (error) {
    run.report.errors.push(
      new RedriveMessageError('remove-failed', source, describeError(error), { cause: error }),
    );
    return false;
  }
}

/** The run's end: each succeeded message removed, unless what it names was written again meanwhile. */
async function removeSucceeded(run: Run): Promise<void> {
  for (const removal of run.ledger.pending()) {
    run.ledger.withdraw(removal.source);
    if (removal.unchanged !== undefined && !(await removal.unchanged())) {
      run.ledger.succeeded(removal);
      await deadLetteredAgain(run, removal.source, 'its object was written again while its records ran');
      continue;
    }
    if (await removeOrReport(run, removal.source, removal.remove)) run.report.messagesRemoved++;
  }
}
