import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { defineEnvironment, type Environment } from '../core/options.js';
import { RECORD_KINDS } from '../index.js';
import { createStreamHandler, kinesisSource, type RouteConfig, route, ttlHealth } from '../pipeline/index.js';
import { ARCHIVE_STORAGE_CLASSES, type ArchiveStorageClass, S3ArchiveSink, S3DeadLetterSink } from '../s3.js';
import { SqsDeadLetterSink } from '../sqs.js';
import {
  ARCHIVE_ROUTES,
  type ArchiveRoutes,
  changeLogPrefix,
  clientRetry,
  DEFAULT_DEAD_LETTER_OVERFLOW_PREFIX,
  userDeletePrefix,
} from './archive-settings.js';
import { HandlerConfigError } from './config-error.js';
import { KEY_PREFIX_OPTION } from './key-prefix.js';

export { HandlerConfigError };

export interface ArchiveHandlerConfig {
  bucket: string;
  prefix: string;
  storageClass: ArchiveStorageClass;
  ttlAttribute: string;
  routes: ArchiveRoutes;
  deadLetterQueueUrl: string;
  /** Key prefix in the archive bucket for dead-letter entries too large for an SQS message. */
  deadLetterOverflowPrefix: string;
  maxRecordAgeSeconds: number | undefined;
  /** The trigger's source: the table's DynamoDB stream or its Kinesis copy (infra/kinesis.yml). */
  source: ArchiveEventSource;
}

/** The sources the archive can be deployed on (infra/settings.yml archiveSource). */
export const ARCHIVE_EVENT_SOURCES = ['dynamodb-stream', 'kinesis'] as const;
export type ArchiveEventSource = (typeof ARCHIVE_EVENT_SOURCES)[number];

/** The variables serverless.yml passes to archiveTtl (infra/settings.yml names them). */
const readEnvironment = /* @__PURE__ */ defineEnvironment<{
  ARCHIVE_BUCKET: string;
  ARCHIVE_PREFIX?: string;
  STORAGE_CLASS?: ArchiveStorageClass;
  TTL_ATTRIBUTE: string;
  ARCHIVE_ROUTES?: ArchiveRoutes;
  DEAD_LETTER_QUEUE_URL: string;
  DEAD_LETTER_OVERFLOW_PREFIX?: string;
  MAX_RECORD_AGE_SECONDS?: number;
  EVENT_SOURCE?: ArchiveEventSource;
}>({ error: (message, variable) => new HandlerConfigError(variable ?? '', message) })('archiveTtl', {
  ARCHIVE_BUCKET: { kind: 'nonEmptyString', required: true },
  ARCHIVE_PREFIX: { ...KEY_PREFIX_OPTION, default: 'archive/' },
  STORAGE_CLASS: { kind: 'enum', values: ARCHIVE_STORAGE_CLASSES, default: 'STANDARD' },
  TTL_ATTRIBUTE: { kind: 'nonEmptyString', required: true },
  ARCHIVE_ROUTES: { kind: 'enum', values: ARCHIVE_ROUTES, default: 'ttl-deletes' },
  DEAD_LETTER_QUEUE_URL: {
    kind: 'custom',
    expected: 'a queue URL (https://…), not a name or ARN',
    check: (v) => typeof v === 'string' && /^https?:\/\//.test(v.trim()),
    required: true,
  },
  DEAD_LETTER_OVERFLOW_PREFIX: { ...KEY_PREFIX_OPTION, default: DEFAULT_DEAD_LETTER_OVERFLOW_PREFIX },
  MAX_RECORD_AGE_SECONDS: { kind: 'integer', min: 1 },
  EVENT_SOURCE: { kind: 'enum', values: ARCHIVE_EVENT_SOURCES, default: 'dynamodb-stream' },
});

/**
 * The settings serverless.yml passes to archiveTtl. Every problem is reported at cold start,
 * before any record is taken, so a misconfigured stage fails loudly instead of checkpointing
 * batches it could not archive.
 */
export function readArchiveConfig(env: Environment): ArchiveHandlerConfig {
  const e = readEnvironment(env);
  return {
    bucket: e.ARCHIVE_BUCKET,
    prefix: e.ARCHIVE_PREFIX,
    storageClass: e.STORAGE_CLASS,
    ttlAttribute: e.TTL_ATTRIBUTE,
    routes: e.ARCHIVE_ROUTES,
    deadLetterQueueUrl: e.DEAD_LETTER_QUEUE_URL.trim(),
    deadLetterOverflowPrefix: e.DEAD_LETTER_OVERFLOW_PREFIX,
    maxRecordAgeSeconds: e.MAX_RECORD_AGE_SECONDS,
    source: e.EVENT_SOURCE,
  };
}

/**
 * TTL deletes (and, with `all-deletes`, user deletes under `<prefix>user-deletes/`; with
 * `every-change`, every insert, modify and delete under `<prefix>changes/`) to S3; poison
 * records to the SQS dead-letter queue, or to the bucket under `deadLetterOverflowPrefix` when too
 * large for a message. Anything else reaching the function means the deployed
 * filter and these routes disagree, so it is dead-lettered rather than counted and dropped.
 */
export function createArchiveHandler(
  config: ArchiveHandlerConfig,
  clients: { s3: S3Client; sqs: SQSClient },
) {
  const archive = (name: string, prefix: string) =>
    new S3ArchiveSink({
      name,
      client: clients.s3,
      bucket: config.bucket,
      prefix,
      storageClass: config.storageClass,
      ttlAttribute: config.ttlAttribute,
    });
  const routes: RouteConfig[] = [
    route({ name: 'ttl-delete', when: 'ttl-delete', to: archive('ttl-archive', config.prefix) }),
  ];
  if (config.routes === 'all-deletes') {
    routes.push(
      route({
        name: 'user-delete',
        when: 'user-delete',
        to: archive('user-delete-archive', userDeletePrefix(config.prefix)),
      }),
    );
  }
  if (config.routes === 'every-change') {
    // The change log holds TTL deletes too, so it is the whole history on its own; the TTL
    // archive beside it stays as it was (restoreItems, its queries and its Athena table).
    routes.push(
      route({
        name: 'change-log',
        when: RECORD_KINDS,
        to: archive('change-log', changeLogPrefix(config.prefix)),
      }),
    );
  }
  return createStreamHandler({
    // The deployed archive reads either source (EVENT_SOURCE), so it links the Kinesis stages.
    source: config.source === 'kinesis' ? kinesisSource() : 'dynamodb-stream',
    routes,
    ttlAttribute: ttlHealth(config.ttlAttribute),
    onUnrouted: 'dead-letter',
    ...(config.maxRecordAgeSeconds === undefined ? {} : { maxRecordAgeSeconds: config.maxRecordAgeSeconds }),
    deadLetter: new SqsDeadLetterSink({
      client: clients.sqs,
      queueUrl: config.deadLetterQueueUrl,
      // An item image alone may be 400 KB, and its DynamoDB JSON more: past the SQS message limit
      // the send would fail on every retry until Lambda discards the record and keeps only its
      // position. Such entries go to the bucket instead, and the message points at them.
      overflow: new S3DeadLetterSink({
        client: clients.s3,
        bucket: config.bucket,
        prefix: config.deadLetterOverflowPrefix,
      }),
    }),
  });
}

/** The clients the deployed handler uses, with clientRetry()'s retries. */
export function createArchiveClients(): { s3: S3Client; sqs: SQSClient } {
  return { s3: new S3Client(clientRetry()), sqs: new SQSClient(clientRetry()) };
}

// Built once per container: config errors fail the init, and clients are reused by warm invocations.
export const handler = createArchiveHandler(readArchiveConfig(process.env), createArchiveClients());
