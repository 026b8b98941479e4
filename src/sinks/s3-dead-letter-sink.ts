import { PutObjectCommand, type PutObjectCommandInput, S3Client } from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { describeError } from '../core/errors.js';
import { defineOptions } from '../core/options.js';
import { safeSegment } from './archive-format.js';
import { entryIdentity, entryLabel, serializeDeadLetterEntry } from './dead-letter-message.js';
import { sha256Base64 } from './digest.js';
import { DeadLetterSendError } from './errors.js';
import {
  keyPrefix,
  lazyClient,
  PREFIX_OPTION,
  S3_OPTIONS,
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

const readOptions = /* @__PURE__ */ defineOptions<S3DeadLetterSinkOptions>()('S3DeadLetterSink', {
  ...S3_OPTIONS,
  prefix: { ...PREFIX_OPTION, default: 'dead-letter' },
  concurrency: { kind: 'integer', min: 1, max: 64, default: 8 },
  name: { kind: 'nonEmptyString', default: 's3-dead-letter' },
});

/**
 * One JSON object per entry, under a key made from the entry's identity
 * (`<prefix>/reason=<reason>/<sequenceNumber>-<eventID>.json`), so re-sending an entry
 * overwrites it instead of adding a copy.
 */
export class S3DeadLetterSink implements DeadLetterSink {
  readonly name: string;
  readonly bucket: string;
  readonly #sdk: () => S3Client;
  readonly #prefix: string;
  readonly #sse: Partial<PutObjectCommandInput>;
  readonly #concurrency: number;

  constructor(options: S3DeadLetterSinkOptions) {
    const o = readOptions(options);
    this.name = o.name;
    this.bucket = o.bucket;
    // Built on first send, not at construction: a cold start pays for the client only when used.
    this.#sdk = lazyClient(o, readOptions, S3Client);
    this.#prefix = keyPrefix(o.prefix);
    this.#sse = sseParams(o.sse, readOptions.where);
    this.#concurrency = o.concurrency;
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
      throw new DeadLetterSendError(
        `S3 PutObject to ${this.bucket} failed (${describeError(cause)})`,
        failed,
        {
          cause,
        },
      );
    }
  }
}
