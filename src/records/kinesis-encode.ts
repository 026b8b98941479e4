import { InvalidAttributeValueError } from './errors.js';
import { keyIdentity } from './key-identity.js';
import type { LambdaStreamRecord } from './types.js';

/** What a Kinesis record adds to a DynamoDB change record. */
export interface ToKinesisRecordOptions {
  /** The Kinesis record's sequence number (decimal digits). */
  sequenceNumber: string;
  /** The table's name; the change record names it instead of carrying a stream ARN. */
  tableName: string;
  /** The Kinesis record's partition key. Default: a hex digest-like text of the keys. */
  partitionKey?: string;
  /** The table's ApproximateCreationDateTimePrecision. Default `'MILLISECOND'`. */
  precision?: 'MILLISECOND' | 'MICROSECOND';
  /**
   * The exact creation time in `precision` units. Default: the record's ApproximateCreationDateTime
   * (epoch seconds) in that unit.
   */
  creationTime?: number;
  /** The Kinesis stream's ARN, as Lambda sets eventSourceARN. */
  streamArn?: string;
  /** The shard, for Lambda's eventID (`<shardId>:<sequenceNumber>`). Default `shardId-000000000000`. */
  shardId?: string;
}

/** A Lambda Kinesis record, as Lambda delivers one from a stream a table's changes are streamed to. */
export interface LambdaKinesisRecord {
  kinesis: {
    kinesisSchemaVersion: string;
    partitionKey: string;
    sequenceNumber: string;
    data: string;
    approximateArrivalTimestamp: number;
  };
  eventSource: 'aws:kinesis';
  eventVersion: string;
  eventID: string;
  eventName: 'aws:kinesis:record';
  /** The mapping's role; Lambda sets it, a record built for a test may leave it out. */
  invokeIdentityArn?: string;
  awsRegion?: string;
  eventSourceARN?: string;
}

/**
 * A DynamoDB stream record (Lambda shape) as Kinesis Data Streams for DynamoDB delivers the same
 * change: the change record without SequenceNumber and StreamViewType, with tableName and
 * recordFormat, its creation time in milliseconds or microseconds, base64 JSON in a Kinesis
 * record. For tests, local bridges and benchmarks.
 */
export function toKinesisRecord(
  record: LambdaStreamRecord,
  options: ToKinesisRecordOptions,
): LambdaKinesisRecord {
  const unit = options.precision === 'MICROSECOND' ? 1e6 : 1e3;
  const created =
    options.creationTime ?? Math.round((record.dynamodb.ApproximateCreationDateTime ?? 0) * unit);
  const change = kinesisChangeRecord(record, { tableName: options.tableName, creationTime: created });
  const data = Buffer.from(JSON.stringify(change), 'utf8').toString('base64');
  const shardId = options.shardId ?? 'shardId-000000000000';
  return {
    kinesis: {
      kinesisSchemaVersion: '1.0',
      partitionKey: options.partitionKey ?? kinesisPartitionKey(record.dynamodb.Keys),
      sequenceNumber: options.sequenceNumber,
      data,
      approximateArrivalTimestamp: created / unit,
    },
    eventSource: 'aws:kinesis',
    eventVersion: '1.0',
    eventID: `${shardId}:${options.sequenceNumber}`,
    eventName: 'aws:kinesis:record',
    ...(record.awsRegion === undefined ? {} : { awsRegion: record.awsRegion }),
    ...(options.streamArn === undefined ? {} : { eventSourceARN: options.streamArn }),
  };
}

/**
 * The change record a table's Kinesis streaming destination writes for a DynamoDB stream record
 * (a Kinesis record's `data` before base64), `creationTime` in the table's precision's unit.
 */
export function kinesisChangeRecord(
  record: LambdaStreamRecord,
  options: { tableName: string; creationTime: number; awsRegion?: string },
): Record<string, unknown> {
  const d = record.dynamodb;
  return {
    awsRegion: options.awsRegion ?? record.awsRegion,
    eventID: record.eventID,
    eventName: record.eventName,
    userIdentity: record.userIdentity ?? null,
    recordFormat: 'application/json',
    tableName: options.tableName,
    dynamodb: {
      ApproximateCreationDateTime: options.creationTime,
      Keys: d.Keys,
      NewImage: d.NewImage,
      OldImage: d.OldImage,
      SizeBytes: d.SizeBytes,
    },
    eventSource: 'aws:dynamodb',
  };
}

/**
 * An item's Kinesis partition key: 32 hex digits from its keys (FNV-1a, four rounds), stable per
 * item, as the streaming destination's hash of the keys is. Hashed by key value (key-identity), so
 * a MODIFY that DynamoDB Local keys `1.50` lands on the shard its INSERT keyed `1.5` did; keys no
 * table could hold are hashed as their text.
 */
export function kinesisPartitionKey(keys: LambdaStreamRecord['dynamodb']['Keys']): string {
  let text: string;
  try {
    text = keyIdentity(keys);
  } catch (error) {
    if (!(error instanceof InvalidAttributeValueError)) throw error;
    text = JSON.stringify(keys);
  }
  let out = '';
  for (let round = 0; round < 4; round++) {
    let h = 0x811c9dc5 ^ round;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    out += (h >>> 0).toString(16).toUpperCase().padStart(8, '0');
  }
  return out;
}
