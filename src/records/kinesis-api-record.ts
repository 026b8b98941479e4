import type { _Record as KinesisApiRecord } from '@aws-sdk/client-kinesis';
import type { LambdaKinesisRecord } from './kinesis-encode.js';

/** Where a GetRecords record was read: what Lambda adds to it in the event. */
export interface KinesisReadContext {
  shardId: string;
  /** The stream's ARN, as Lambda sets eventSourceARN. */
  streamArn: string;
  awsRegion: string;
  /** The mapping's role, as Lambda writes it into each record's invokeIdentityArn. */
  invokeIdentityArn?: string;
}

/**
 * A GetRecords record as Lambda delivers it to a Kinesis-triggered function (the Lambda guide's
 * example Kinesis event): the local shard reader and redrive both hand records on in this shape,
 * so a handler cannot tell a redriven batch from the mapping's.
 */
export function fromKinesisApiRecord(
  record: KinesisApiRecord,
  context: KinesisReadContext,
): LambdaKinesisRecord {
  const sequenceNumber = record.SequenceNumber as string;
  return {
    kinesis: {
      kinesisSchemaVersion: '1.0',
      partitionKey: record.PartitionKey as string,
      sequenceNumber,
      data: Buffer.from(record.Data ?? new Uint8Array()).toString('base64'),
      approximateArrivalTimestamp: (record.ApproximateArrivalTimestamp?.getTime() ?? 0) / 1000,
    },
    eventSource: 'aws:kinesis',
    eventVersion: '1.0',
    eventID: `${context.shardId}:${sequenceNumber}`,
    eventName: 'aws:kinesis:record',
    ...(context.invokeIdentityArn === undefined ? {} : { invokeIdentityArn: context.invokeIdentityArn }),
    awsRegion: context.awsRegion,
    eventSourceARN: context.streamArn,
  };
}
