import { kinesisFilterInput } from '../../filters/index.js';
import { InvalidAttributeValueError } from '../../records/errors.js';
import type { LambdaKinesisRecord, LambdaStreamRecord } from '../../records/index.js';
import { keyIdentity } from '../../records/key-identity.js';
import { MAX_KINESIS_SEQUENCE_DIGITS } from '../../records/kinesis-position.js';
import { UnstreamableRecordError } from './errors.js';
import { createdAtMs } from './record-age.js';

/**
 * What the event source mapping reads from a record of its source: Lambda runs the same batching,
 * retry, bisect, partial-batch, record-age and window rules over a DynamoDB stream and a Kinesis
 * stream, and differs only in these (Lambda developer guide, "Using Lambda with Kinesis Data
 * Streams" beside "Using Lambda with DynamoDB").
 */
export interface RecordSource<R> {
  /** The key of the on-failure invocation record's batch info. */
  readonly batchInfoKey: 'DDBStreamBatchInfo' | 'KinesisBatchInfo';
  /** The record's sequence number (the checkpoint, the partial batch response's itemIdentifier) and eventID. */
  identity(record: R): { sequenceNumber: string; eventId: string | undefined };
  /**
   * What keeps records in order across ParallelizationFactor's concurrent batches: the item's
   * keys for DynamoDB ("ordering at the item (partition and sort key) level"), the partition key
   * for Kinesis ("in-order processing at the partition-key level").
   */
  laneKey(record: R): string;
  /**
   * When the record entered the stream, epoch ms; undefined when it says nothing. Record age
   * and tumbling windows count from it: ApproximateCreationDateTime on a DynamoDB stream,
   * approximateArrivalTimestamp on a Kinesis stream.
   */
  stampedAtMs(record: R): number | undefined;
  /** The record as the mapping's FilterCriteria see it. */
  filterInput(record: R): unknown;
}

const DYNAMODB_SEQUENCE = /^\d{1,40}$/;
const KINESIS_SEQUENCE = new RegExp(`^(0|[1-9]\\d{0,${MAX_KINESIS_SEQUENCE_DIGITS - 1}})$`);

function digits(
  text: unknown,
  pattern: RegExp,
  eventId: string | undefined,
  what: string,
): { sequenceNumber: string; eventId: string | undefined } {
  if (typeof text !== 'string' || !pattern.test(text)) {
    throw new UnstreamableRecordError(
      eventId,
      typeof text === 'string' ? text : undefined,
      `${JSON.stringify(text)} is not ${what}; the emulator orders records by it`,
    );
  }
  return { sequenceNumber: text, eventId };
}

export const DYNAMODB_SOURCE: RecordSource<LambdaStreamRecord> = {
  batchInfoKey: 'DDBStreamBatchInfo',
  identity: (record) =>
    digits(
      record.dynamodb?.SequenceNumber,
      DYNAMODB_SEQUENCE,
      record.eventID,
      'a DynamoDB sequence number (1 to 40 digits)',
    ),
  // By value (records/key-identity), not by text: DynamoDB Local's MODIFY carries a number key as
  // the request spelt it (1.50), and by text one item's records ran in concurrent batches.
  laneKey(record) {
    try {
      return keyIdentity(record.dynamodb.Keys);
    } catch (error) {
      if (!(error instanceof InvalidAttributeValueError)) throw error;
      // Keys no table could hold name no item: they share one lane, so the handler sees them in order.
      return '';
    }
  },
  stampedAtMs: createdAtMs,
  filterInput: (record) => record,
};

export const KINESIS_SOURCE: RecordSource<LambdaKinesisRecord> = {
  batchInfoKey: 'KinesisBatchInfo',
  identity: (record) =>
    digits(
      record.kinesis?.sequenceNumber,
      KINESIS_SEQUENCE,
      record.eventID,
      `a Kinesis sequence number (up to ${MAX_KINESIS_SEQUENCE_DIGITS} digits)`,
    ),
  laneKey: (record) => record.kinesis.partitionKey,
  stampedAtMs(record) {
    const arrival = record.kinesis.approximateArrivalTimestamp;
    return typeof arrival === 'number' ? Math.round(arrival * 1000) : undefined;
  },
  filterInput: kinesisFilterInput,
};
