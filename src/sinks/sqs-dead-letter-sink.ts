import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, SQSClient } from '@aws-sdk/client-sqs';
import { sha256Hex } from '../core/digest.js';
import { describeError, PartialFailureError } from '../core/errors.js';
import { defineOptions } from '../core/options.js';
import { RETRY_POLICIES, type RetryPolicy, withAttempts, withRetry } from '../core/retry.js';
import {
  deduplicationId,
  entryLabel,
  planSqsBatches,
  type SqsMessagePlan,
  serializeDeadLetterEntry,
  serializeDeadLetterPointer,
} from './dead-letter-message.js';
import { DeadLetterSendError } from './errors.js';
import { CLIENT_OPTIONS, lazyClient, type SinkClientOptions } from './options.js';
import { S3DeadLetterSink } from './s3-dead-letter-sink.js';
import type { DeadLetterEntry, DeadLetterSink, SinkContext } from './types.js';

/** Options of SqsDeadLetterSink: the queue, message size, overflow bucket and client. */
export interface SqsDeadLetterSinkOptions extends SinkClientOptions<SQSClient> {
  queueUrl: string;
  /**
   * The queue's maximum message size in bytes; default 262,144 (256 KiB, every queue accepts it).
   * Queues configured for more (up to 1 MiB) may raise it.
   */
  maxMessageBytes?: number;
  /**
   * Where entries larger than `maxMessageBytes` go; the SQS message then carries a pointer
   * (`type: 'tidewater.dead-letter.pointer'`, bucket, key). Without it such an entry makes `send` throw.
   */
  overflow?: S3DeadLetterSink;
  /**
   * FIFO queues only: the message group (1-128 characters); default the record's eventSourceARN,
   * or its SHA-256 when the ARN is longer than SQS allows (one group per stream either way).
   */
  messageGroupId?: string;
  /** Resends of entries SQS failed with a server fault, after the client's own retries. Default 3. */
  entryRetries?: number;
  name?: string;
}

const SQS_MAX_BYTES = 1_048_576;
/** SQS's rule for a MessageGroupId: 1 to 128 characters, alphanumerics and punctuation. */
const GROUP_ID = /^[!-~]{1,128}$/;

const readOptions = /* @__PURE__ */ defineOptions<SqsDeadLetterSinkOptions>()('SqsDeadLetterSink', {
  queueUrl: { kind: 'nonEmptyString', required: true },
  ...CLIENT_OPTIONS,
  maxMessageBytes: { kind: 'integer', min: 1, max: SQS_MAX_BYTES, default: 262_144 },
  overflow: {
    kind: 'custom',
    expected: 'an S3DeadLetterSink',
    check: (v) => v instanceof S3DeadLetterSink,
  },
  messageGroupId: {
    kind: 'custom',
    expected: '1 to 128 characters, letters, digits and punctuation',
    check: (v) => typeof v === 'string' && GROUP_ID.test(v),
  },
  entryRetries: {
    kind: 'integer',
    min: 0,
    max: 10,
    default: RETRY_POLICIES.deadLetterSend.attempts - 1,
  },
  name: { kind: 'nonEmptyString', default: 'sqs-dead-letter' },
});

/**
 * The FIFO group of an entry: its stream, so one stream's dead letters stay in order. A stream
 * ARN passes 128 characters once the table name passes ~50 (names may have 255), and SQS refuses
 * such an id, so a long ARN is replaced by its SHA-256 — still one group per stream.
 */
export function streamGroupId(eventSourceARN: string | undefined): string {
  if (eventSourceARN === undefined) return 'tidewater-dead-letter';
  if (GROUP_ID.test(eventSourceARN)) return eventSourceARN;
  return `stream-sha256-${sha256Hex(eventSourceARN)}`;
}

/** Dead-letters to an SQS queue with SendMessageBatch: 10 messages and the size limit per call. */
export class SqsDeadLetterSink implements DeadLetterSink {
  readonly name: string;
  readonly #sdk: () => SQSClient;
  readonly #queueUrl: string;
  readonly #maxBytes: number;
  readonly #overflow: S3DeadLetterSink | undefined;
  readonly #fifo: boolean;
  readonly #groupId: string | undefined;
  readonly #retry: RetryPolicy;

  constructor(options: SqsDeadLetterSinkOptions) {
    const o = readOptions(options);
    this.name = o.name;
    this.#queueUrl = o.queueUrl;
    // Built on first send, not at construction: a cold start pays for the client only when used.
    this.#sdk = lazyClient(o, readOptions, SQSClient);
    this.#maxBytes = o.maxMessageBytes;
    this.#overflow = o.overflow;
    this.#fifo = this.#queueUrl.endsWith('.fifo');
    this.#groupId = o.messageGroupId;
    if (this.#groupId !== undefined && !this.#fifo) {
      throw readOptions.fail(
        'messageGroupId applies to FIFO queues (a queueUrl ending in .fifo)',
        'messageGroupId',
      );
    }
    this.#retry = withAttempts(RETRY_POLICIES.deadLetterSend, o.entryRetries + 1);
  }

  /** The messages for a send, oversize entries already replaced by pointers (pure but for the overflow PUT). */
  async #messages(entries: readonly DeadLetterEntry[], context: SinkContext): Promise<SqsMessagePlan[]> {
    const out: SqsMessagePlan[] = [];
    for (const entry of entries) {
      let body = serializeDeadLetterEntry(entry);
      let bytes = Buffer.byteLength(body);
      if (bytes > this.#maxBytes) {
        if (this.#overflow === undefined) {
          throw new DeadLetterSendError(
            `the entry is ${bytes} bytes, over the ${this.#maxBytes}-byte SQS limit, and no overflow sink is configured`,
            [entryLabel(entry)],
          );
        }
        let key: string;
        try {
          key = await this.#overflow.put(entry, context, body);
        } catch (error) {
          // Nothing of this send has gone to SQS yet: every entry is unsent, not only this one.
          throw new DeadLetterSendError(
            `storing an entry of ${bytes} bytes in s3://${this.#overflow.bucket} failed (${describeError(error)})`,
            entries.map(entryLabel),
            { cause: error },
          );
        }
        body = serializeDeadLetterPointer(entry, this.#overflow.bucket, key, bytes);
        bytes = Buffer.byteLength(body);
      }
      out.push({ entry, body, bytes });
    }
    return out;
  }

  #requestEntry(message: SqsMessagePlan, id: string): SendMessageBatchRequestEntry {
    const request: SendMessageBatchRequestEntry = { Id: id, MessageBody: message.body };
    if (this.#fifo) {
      request.MessageGroupId = this.#groupId ?? streamGroupId(message.entry.eventSourceARN);
      request.MessageDeduplicationId = deduplicationId(message.entry, message.body);
    }
    return request;
  }

  async #sendBatch(batch: SqsMessagePlan[], context: SinkContext): Promise<void> {
    let pending = batch;
    await withRetry(
      async () => {
        const response = await this.#sdk().send(
          new SendMessageBatchCommand({
            QueueUrl: this.#queueUrl,
            Entries: pending.map((m, i) => this.#requestEntry(m, `m${i}`)),
          }),
          { abortSignal: context.signal },
        );
        const failed = response.Failed ?? [];
        if (failed.length === 0) return;
        const byId = new Map(pending.map((m, i) => [`m${i}`, m]));
        const senderFault = failed.find((f) => f.SenderFault);
        const labels = failed.map((f) => entryLabel((byId.get(f.Id ?? '') as SqsMessagePlan).entry));
        if (senderFault !== undefined) {
          // The request itself is wrong (too large, bad attribute): resending cannot help.
          throw new DeadLetterSendError(
            `SQS rejected the message: ${senderFault.Code} ${senderFault.Message ?? ''}`.trim(),
            labels,
          );
        }
        pending = failed.map((f) => byId.get(f.Id ?? '') as SqsMessagePlan);
        throw new PartialFailureError(
          failed.length,
          `${failed.length} entries failed: ${failed.map((f) => f.Code).join(', ')} (${labels.join(', ')})`,
        );
      },
      {
        policy: this.#retry,
        retryable: (error) => error instanceof PartialFailureError,
        signal: context.signal,
      },
    ).catch((error: unknown) => {
      if (error instanceof DeadLetterSendError) throw error;
      throw new DeadLetterSendError(
        `SendMessageBatch to ${this.#queueUrl} failed`,
        pending.map((m) => entryLabel(m.entry)),
        { cause: error },
      );
    });
  }

  async send(entries: readonly DeadLetterEntry[], context: SinkContext): Promise<void> {
    if (entries.length === 0) return;
    const messages = await this.#messages(entries, context);
    // Sequential: a failed call then leaves the later entries unsent and the error names exactly what is missing.
    const batches = planSqsBatches(messages, this.#maxBytes);
    for (let i = 0; i < batches.length; i++) {
      try {
        await this.#sendBatch(batches[i] as SqsMessagePlan[], context);
      } catch (error) {
        const unsent = batches.slice(i + 1).flatMap((b) => b.map((m) => entryLabel(m.entry)));
        if (unsent.length === 0 || !(error instanceof DeadLetterSendError)) throw error;
        throw new DeadLetterSendError(error.message, [...error.sequenceNumbers, ...unsent], {
          cause: error.cause ?? error,
        });
      }
    }
  }
}
