import { PutObjectCommand, type PutObjectCommandInput, S3Client } from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { InvalidOptionsError } from '../records/errors.js';
import { safeSegment } from './archive-format.js';
import { entryIdentity, entryLabel, serializeDeadLetterEntry } from './dead-letter-message.js';
import { sha256Base64 } from './digest.js';
import { DeadLetterSendError } from './errors.js';
import {
  assertOptions,
  keyPrefix,
  optionalClient,
  optionalString,
  positiveInteger,
  requiredString,
  type ServerSideEncryption,
  sseParams,
} from './options.js';
import type { DeadLetterEntry, DeadLetterSink, SinkContext } from './types.js';

export interface S3DeadLetterSinkOptions {
  bucket: string;
  /** An S3Client whose retry configuration applies; default one built with `maxAttempts`, standard retries. */
  client?: S3Client;
  maxAttempts?: number;
  /** Key prefix. Default `dead-letter`. */
  prefix?: string;
  sse?: ServerSideEncryption;
  concurrency?: number;
  name?: string;
}

const OPTIONS = ['bucket', 'client', 'maxAttempts', 'prefix', 'sse', 'concurrency', 'name'] as const;
const WHERE = 'S3DeadLetterSink';

/**
 * One JSON object per entry, under a key made from the entry's identity
 * (`<prefix>/reason=<reason>/<sequenceNumber>-<eventID>.json`), so re-sending an entry
 * overwrites it instead of adding a copy.
 */
export class S3DeadLetterSink implements DeadLetterSink {
  readonly name: string;
  readonly bucket: string;
  // Built on first send, not at construction: a cold start pays for the client only when used.
  #client: S3Client | undefined;
  readonly #makeClient: () => S3Client;
  readonly #prefix: string;
  readonly #sse: Partial<PutObjectCommandInput>;
  readonly #concurrency: number;

  #sdk(): S3Client {
    this.#client ??= this.#makeClient();
    return this.#client;
  }

  constructor(options: S3DeadLetterSinkOptions) {
    if (options === undefined) throw new InvalidOptionsError(`${WHERE}: options with a bucket are required`);
    assertOptions(options, OPTIONS, WHERE);
    this.name = optionalString(options, 'name', WHERE) ?? 's3-dead-letter';
    this.bucket = requiredString(options, 'bucket', WHERE);
    const client = optionalClient<S3Client>(options, WHERE);
    if (client !== undefined && options.maxAttempts !== undefined) {
      throw new InvalidOptionsError(
        `${WHERE}: maxAttempts configures the client the sink builds; set it on the injected client instead`,
      );
    }
    this.#client = client;
    const maxAttempts = positiveInteger(options, 'maxAttempts', WHERE, 8, 20);
    this.#makeClient = () => new S3Client({ maxAttempts, retryMode: 'standard' });
    this.#prefix = options.prefix === undefined ? 'dead-letter' : keyPrefix(options, WHERE);
    this.#sse = sseParams(options.sse, WHERE);
    this.#concurrency = positiveInteger(options, 'concurrency', WHERE, 8, 64);
  }

  /** Where an entry is (or would be) stored. */
  keyFor(entry: DeadLetterEntry, body = serializeDeadLetterEntry(entry)): string {
    const head = this.#prefix === '' ? '' : `${this.#prefix}/`;
    return `${head}reason=${safeSegment(entry.reason)}/${safeSegment(entryIdentity(entry, body))}.json`;
  }

  /** Stores one entry and returns its key (SqsDeadLetterSink uses this for entries too large for SQS). */
  async put(
    entry: DeadLetterEntry,
    context?: SinkContext,
    body = serializeDeadLetterEntry(entry),
  ): Promise<string> {
    const key = this.keyFor(entry, body);
    const bytes = Buffer.from(body);
    await this.#sdk().send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: bytes,
        ContentType: 'application/json',
        ChecksumSHA256: sha256Base64(bytes),
        Metadata: {
          reason: entry.reason,
          'sequence-number': entry.sequenceNumber ?? '',
          'event-id': entry.eventID ?? '',
        },
        ...this.#sse,
      }),
      { abortSignal: context?.signal },
    );
    return key;
  }

  async send(entries: readonly DeadLetterEntry[], context: SinkContext): Promise<void> {
    const limit = pLimit(this.#concurrency);
    const results = await Promise.allSettled(entries.map((entry) => limit(() => this.put(entry, context))));
    const failed: string[] = [];
    let cause: unknown;
    results.forEach((result, i) => {
      if (result.status === 'rejected') {
        failed.push(entryLabel(entries[i] as DeadLetterEntry));
        cause ??= result.reason;
      }
    });
    if (failed.length > 0) {
      const reason = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
      throw new DeadLetterSendError(`S3 PutObject to ${this.bucket} failed (${reason})`, failed, { cause });
    }
  }
}
