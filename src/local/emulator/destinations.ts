import { randomUUID } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { defineOptions } from '../../core/index.js';
import type { StreamInvocationRecord } from '../../records/index.js';
import { batchInfoOf, type MappingInvocationRecord } from '../../records/on-failure-record.js';

export type { FailureCondition, StreamInvocationRecord } from '../../records/index.js';

/**
 * Where discarded batches go. SQS and SNS destinations get the invocation record (metadata only);
 * an S3 destination also gets the batch's records, so `records` is handed to every destination.
 */
export interface FailureDestination {
  /** `record` names the batch (DDBStreamBatchInfo or, from a Kinesis stream, KinesisBatchInfo). */
  send(record: MappingInvocationRecord, records: readonly unknown[]): Promise<void>;
}

/** Keeps what it is sent; `T` is the kind of invocation record its mapping sends. */
export class MemoryFailureDestination<T extends MappingInvocationRecord = StreamInvocationRecord>
  implements FailureDestination
{
  readonly records: T[] = [];
  async send(record: MappingInvocationRecord): Promise<void> {
    this.records.push(record as T);
  }
}

/** An on-failure destination that sends Lambda's on-failure record to an SQS queue. */
export class SqsFailureDestination implements FailureDestination {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}
  async send(record: MappingInvocationRecord): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(record) }),
    );
  }
}

/** Options of S3FailureDestination: the mapping UUID its keys are under. */
export interface S3FailureDestinationOptions {
  /** The event source mapping's UUID, the key's second level; default a random one per destination. */
  eventSourceMappingUuid?: string;
}

/**
 * The invocation record as an S3 destination stores it: plus `payload`, "the original invocation
 * record as an escaped JSON string" (Lambda developer guide, "Error handling for DynamoDB event
 * sources", the example Amazon S3 invocation record) — the event `{"Records":[…]}` as text, to be
 * JSON.parse'd.
 */
export type S3InvocationRecord = MappingInvocationRecord & { payload: string };

const readOptions = defineOptions<S3FailureDestinationOptions>()('S3FailureDestination', {
  eventSourceMappingUuid: {
    kind: 'custom',
    expected: 'a UUID',
    check: (value) => typeof value === 'string' && /^[\w-]+$/.test(value),
  },
});

/**
 * Lambda's S3 on-failure destination for stream sources: one object per discarded batch, keyed
 * `aws/lambda/<ESM-UUID>/<shardID>/YYYY/MM/DD/YYYY-MM-DDTHH.MM.SS-<random UUID>` (UTC, from the
 * record's timestamp), holding the invocation record plus `payload`, the event as a JSON string —
 * unlike SQS and SNS destinations, S3 gets the records themselves.
 */
export class S3FailureDestination implements FailureDestination {
  readonly eventSourceMappingUuid: string;

  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    options: S3FailureDestinationOptions = {},
  ) {
    this.eventSourceMappingUuid = readOptions(options).eventSourceMappingUuid ?? randomUUID();
  }

  /** The object key for an invocation record. */
  keyOf(record: MappingInvocationRecord): string {
    const time = record.timestamp; // ISO 8601, UTC: 2026-01-01T12:34:56.789Z
    const day = time.slice(0, 10).replaceAll('-', '/');
    const stamp = `${time.slice(0, 10)}T${time.slice(11, 19).replaceAll(':', '.')}`;
    return `aws/lambda/${this.eventSourceMappingUuid}/${batchInfoOf(record).shardId}/${day}/${stamp}-${randomUUID()}`;
  }

  async send(record: MappingInvocationRecord, records: readonly unknown[]): Promise<void> {
    const body: S3InvocationRecord = { ...record, payload: JSON.stringify({ Records: records }) };
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.keyOf(record),
        Body: JSON.stringify(body),
        ContentType: 'application/json',
      }),
    );
  }
}
