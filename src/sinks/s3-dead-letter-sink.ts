import {
  DeleteObjectCommand,
  PutObjectCommand,
  type PutObjectCommandInput,
  S3Client,
} from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { keyPrefix, PREFIX_OPTION, type ServerSideEncryption, sseParams } from '../archive/bucket-options.js';
import { safeSegment } from '../archive/format.js';
import { sha256Base64 } from '../core/digest.js';
import { describeError } from '../core/errors.js';
import { defineOptions } from '../core/options.js';
import { entryIdentity, entryLabel, serializeDeadLetterEntry } from './dead-letter-message.js';
import { DeadLetterSendError } from './errors.js';
import { lazyClient, S3_OPTIONS, type SinkClientOptions } from './options.js';
import type { DeadLetterEntry, DeadLetterSink, SinkContext } from './types.js';

/** Options of S3DeadLetterSink: the bucket, key prefix and client. */
export interface S3DeadLetterSinkOptions extends SinkClientOptions<S3Client> {
  bucket: string;
  /** Key prefix. Default `dead-letter`. */
  prefix?: string;
  sse?: ServerSideEncryption;
  concurrency?: number;
  name?: string;
}

/** How long the deletes after a failed send may take: well within the pipeline's default 1 s deadline margin. */
const RETRACT_MS = 500;

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
 *
 * A send stores a prefix of its entries: PUTs start in order and none starts after one has
 * failed; then every entry from the first failure on whose PUT was sent is deleted again — those
 * stored all the same (PUTs in flight), and the failed ones too, since a PUT that failed (a 5xx,
 * a timeout, the deadline's abort) may have been applied. DeadLetterSendError names every entry
 * from the first failure on, so the pipeline fails exactly those records and counts the ones
 * before as dead-lettered. The deletes do not stop at the invocation's deadline (it fires while
 * PUTs are in flight, and the pipeline's deadline margin is there to finish up) but get at most
 * RETRACT_MS. A delete that fails, or a PUT S3 applies after its delete, leaves an entry for a
 * record that is redelivered: its key names the record, and a replay skips what the archive holds
 * (docs/sinks.md).
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
    // pLimit starts tasks in order, so every entry before the first failure has started by then.
    let firstFailed = entries.length;
    let cause: unknown;
    const sent = await Promise.all(
      entries.map((entry, i) =>
        limit(async () => {
          if (i > firstFailed) return false;
          try {
            await this.put(entry, context);
          } catch (error) {
            if (i < firstFailed) {
              firstFailed = i;
              cause = error;
            }
          }
          return true;
        }),
      ),
    );
    if (firstFailed === entries.length) return;
    const signal = AbortSignal.timeout(RETRACT_MS);
    await Promise.all(
      entries
        .slice(firstFailed)
        .filter((_, k) => sent[firstFailed + k])
        .map((entry) => limit(() => this.#retract(this.keyFor(entry), signal, context))),
    );
    throw new DeadLetterSendError(
      `S3 PutObject to ${this.bucket} failed (${describeError(cause)})`,
      entries.slice(firstFailed).map(entryLabel),
      { cause },
    );
  }

  /** Deletes an entry from the send's first failure on: its record is not done, so it is no dead letter. */
  async #retract(key: string, signal: AbortSignal, context: SinkContext): Promise<void> {
    try {
      await this.#sdk().send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }), {
        abortSignal: signal,
      });
    } catch (error) {
      context.logger?.warn(
        { sink: this.name, bucket: this.bucket, key, err: error },
        'could not delete a dead-letter entry of a failed send: its record is redelivered and the entry may stay (a replay skips it once the record is archived)',
      );
    }
  }
}
