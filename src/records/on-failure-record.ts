import { NotAStreamEventError } from './errors.js';
import { isObject } from './shape.js';

/** Why Lambda gave up on a batch, as an on-failure record states it. */
export type FailureCondition = 'RetryAttemptsExhausted' | 'RecordAgeExceeded';

/**
 * What Lambda sends to an on-failure destination when it gives up on a DynamoDB stream batch
 * (Lambda developer guide, "Retaining discarded records for a DynamoDB event source", the
 * example invocation record): metadata naming the batch, never its records. `responseContext`
 * is there only when the function was invoked.
 */
export interface StreamInvocationRecord {
  requestContext: {
    requestId: string;
    functionArn: string;
    condition: FailureCondition;
    approximateInvokeCount: number;
  };
  responseContext?: {
    statusCode: number;
    executedVersion: string;
    functionError?: string;
  };
  version: '1.0';
  timestamp: string;
  DDBStreamBatchInfo: StreamBatchInfo;
}

/** The batch an invocation record names: one shard, a sequence range, both ends inclusive. */
export interface StreamBatchInfo {
  shardId: string;
  startSequenceNumber: string;
  endSequenceNumber: string;
  approximateArrivalOfFirstRecord: string;
  approximateArrivalOfLastRecord: string;
  batchSize: number;
  streamArn: string;
}

/**
 * The invocation record for a Kinesis stream: the same fields, the batch under `KinesisBatchInfo`
 * (Lambda developer guide, "Retaining discarded batches for a Kinesis Data Streams event source").
 */
export type KinesisInvocationRecord = Omit<StreamInvocationRecord, 'DDBStreamBatchInfo'> & {
  KinesisBatchInfo: StreamBatchInfo;
};

/** What an event source mapping sends to its on-failure destination, whichever its source. */
export type MappingInvocationRecord = StreamInvocationRecord | KinesisInvocationRecord;

/** The batch an invocation record names, whichever its source. */
export function batchInfoOf(record: MappingInvocationRecord): StreamBatchInfo {
  return 'KinesisBatchInfo' in record ? record.KinesisBatchInfo : record.DDBStreamBatchInfo;
}

/**
 * The input is Lambda's on-failure record for a stream batch (or an SQS / SNS delivery of one),
 * not a stream event: it names records without holding them. Still a NotAStreamEventError, so
 * callers that catch that go on working; `tidewater redrive` reads the named range back.
 */
export class OnFailureRecordError extends NotAStreamEventError {
  override name = 'OnFailureRecordError';
  declare readonly streamArn: string;
  declare readonly shardId: string;
  declare readonly startSequenceNumber: string;
  declare readonly endSequenceNumber: string;

  constructor({ streamArn, shardId, startSequenceNumber, endSequenceNumber }: StreamBatchInfo) {
    super(
      `this is Lambda's on-failure record for a discarded batch (stream ${streamArn}, shard ${shardId}, ` +
        `sequence numbers ${startSequenceNumber} to ${endSequenceNumber}); it names the records but ` +
        'does not hold them: run `tidewater redrive` (or redrive() from tidewater/redrive) to read them back ' +
        'from the stream and process them',
    );
    Object.assign(this, { streamArn, shardId, startSequenceNumber, endSequenceNumber });
  }
}

/** The batch info when `value` looks like an on-failure record (a DDBStreamBatchInfo object with a range). */
export function streamBatchInfoOf(value: unknown): StreamBatchInfo | undefined {
  return batchInfoUnder(value, 'DDBStreamBatchInfo');
}

/**
 * The batch info under `key` (`DDBStreamBatchInfo`, or a Kinesis mapping's `KinesisBatchInfo`)
 * when it names a shard, a stream and both ends of a range.
 */
export function batchInfoUnder(value: unknown, key: string): StreamBatchInfo | undefined {
  if (!isObject(value)) return undefined;
  const info = value[key];
  if (!isObject(info)) return undefined;
  return BATCH_INFO_FIELDS.every((field) => typeof info[field] === 'string')
    ? (info as unknown as StreamBatchInfo)
    : undefined;
}

const BATCH_INFO_FIELDS = ['shardId', 'startSequenceNumber', 'endSequenceNumber', 'streamArn'] as const;

/** An SQS record's body or an SNS notification's Message, parsed, when it is JSON text. */
function deliveredBody(record: unknown): unknown {
  if (!isObject(record)) return undefined;
  const text = record.body ?? (isObject(record.Sns) ? record.Sns.Message : undefined);
  if (typeof text !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    // An SNS subscription without raw delivery wraps the record once more.
    if (isObject(parsed) && parsed.Type === 'Notification' && typeof parsed.Message === 'string')
      return JSON.parse(parsed.Message);
    return parsed;
  } catch {
    return undefined;
  }
}

/**
 * Called only where the parser is about to throw NotAStreamEventError: the on-failure record
 * itself, or an SQS / SNS event whose first delivery carries one. Off the hot path by design.
 */
export function throwIfOnFailureRecord(input: unknown): void {
  const info =
    streamBatchInfoOf(input) ??
    (isObject(input) && Array.isArray(input.Records)
      ? streamBatchInfoOf(deliveredBody(input.Records[0]))
      : undefined);
  if (info) throw new OnFailureRecordError(info);
}
