import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createStreamHandler, type RouteConfig, route } from '../pipeline/index.js';
import { ARCHIVE_STORAGE_CLASSES, type ArchiveStorageClass, S3ArchiveSink, S3DeadLetterSink } from '../s3.js';
import { SqsDeadLetterSink } from '../sqs.js';
import { keyPrefixProblem } from './key-prefix.js';

/** A deployment setting (an environment variable) is missing or invalid. Thrown at cold start. */
export class HandlerConfigError extends Error {
  override readonly name = 'HandlerConfigError';
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
  }
}

const ARCHIVE_ROUTES = ['ttl-deletes', 'all-deletes'] as const;

export interface ArchiveHandlerConfig {
  bucket: string;
  prefix: string;
  storageClass: ArchiveStorageClass;
  ttlAttribute: string;
  routes: (typeof ARCHIVE_ROUTES)[number];
  deadLetterQueueUrl: string;
  /** Key prefix in the archive bucket for dead-letter entries too large for an SQS message. */
  deadLetterOverflowPrefix: string;
  maxRecordAgeSeconds: number | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

function required(env: Env, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new HandlerConfigError(name, 'is not set');
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = env[name]?.trim() || fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new HandlerConfigError(name, `is ${JSON.stringify(value)}, expected one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** A key prefix in the archive bucket; unset takes serverless.yml's default, set must be valid. */
function keyPrefix(env: Env, name: string, fallback: string): string {
  const value = env[name] ?? fallback;
  const problem = keyPrefixProblem(value);
  if (problem !== undefined) throw new HandlerConfigError(name, problem);
  return value;
}

function optionalSeconds(env: Env, name: string): number | undefined {
  const text = env[name]?.trim();
  if (!text) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value <= 0) {
    throw new HandlerConfigError(
      name,
      `must be a positive whole number of seconds, got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/**
 * The settings serverless.yml passes to archiveTtl (infra/settings.yml names them). Every problem
 * is reported at cold start, before any record is taken, so a misconfigured stage fails loudly
 * instead of checkpointing batches it could not archive.
 */
export function readArchiveConfig(env: Env): ArchiveHandlerConfig {
  const bucket = required(env, 'ARCHIVE_BUCKET');
  const deadLetterQueueUrl = required(env, 'DEAD_LETTER_QUEUE_URL');
  if (!/^https?:\/\//.test(deadLetterQueueUrl)) {
    throw new HandlerConfigError('DEAD_LETTER_QUEUE_URL', 'must be a queue URL, not a name or ARN');
  }
  return {
    bucket,
    prefix: keyPrefix(env, 'ARCHIVE_PREFIX', 'archive/'),
    storageClass: oneOf(env, 'STORAGE_CLASS', ARCHIVE_STORAGE_CLASSES, 'STANDARD'),
    ttlAttribute: required(env, 'TTL_ATTRIBUTE'),
    routes: oneOf(env, 'ARCHIVE_ROUTES', ARCHIVE_ROUTES, 'ttl-deletes'),
    deadLetterQueueUrl,
    deadLetterOverflowPrefix: keyPrefix(env, 'DEAD_LETTER_OVERFLOW_PREFIX', 'dead-letter/'),
    maxRecordAgeSeconds: optionalSeconds(env, 'MAX_RECORD_AGE_SECONDS'),
  };
}

/**
 * TTL deletes (and, with `all-deletes`, user deletes under `<prefix>user-deletes/`) to S3; poison
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
  const userDeletePrefix = [config.prefix.replace(/^\/+|\/+$/g, ''), 'user-deletes']
    .filter(Boolean)
    .join('/');
  const routes: RouteConfig[] = [
    route({ name: 'ttl-delete', when: 'ttl-delete', to: archive('ttl-archive', config.prefix) }),
  ];
  if (config.routes === 'all-deletes') {
    routes.push(
      route({
        name: 'user-delete',
        when: 'user-delete',
        to: archive('user-delete-archive', userDeletePrefix),
      }),
    );
  }
  return createStreamHandler({
    routes,
    ttlAttribute: config.ttlAttribute,
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

/**
 * The clients the deployed handler uses. The sinks rely on the SDK for retrying S3 and SQS
 * failures and document 8 attempts; the SDK default would give 3.
 */
export function createArchiveClients(): { s3: S3Client; sqs: SQSClient } {
  const retry = { maxAttempts: 8, retryMode: 'standard' } as const;
  return { s3: new S3Client(retry), sqs: new SQSClient(retry) };
}

// Built once per container: config errors fail the init, and clients are reused by warm invocations.
export const handler = createArchiveHandler(readArchiveConfig(process.env), createArchiveClients());
