/**
 * The record model. Every other folder consumes these types; keep them small and stable.
 *
 * Two wire shapes exist for a stream record:
 * - the Lambda event shape (`LambdaStreamRecord`): epoch-seconds ApproximateCreationDateTime,
 *   lower-camel `userIdentity.principalId`, `eventSourceARN`, binary as base64 strings;
 * - the SDK GetRecords shape (@aws-sdk/client-dynamodb-streams): `Date` timestamps,
 *   `userIdentity.PrincipalId` (PascalCase members), binary as Uint8Array, no ARN.
 * tidewater normalizes everything to the Lambda shape and keeps it as `raw`, untouched.
 */

/** The ten type keys of a DynamoDB AttributeValue, with what each carries; `Bin` is binary's form. */
interface AttributeTypes<Bin> {
  S: string;
  N: string;
  B: Bin;
  SS: string[];
  NS: string[];
  BS: Bin[];
  M: Record<string, ExclusiveAttributeValue<Bin>>;
  L: ExclusiveAttributeValue<Bin>[];
  NULL: boolean;
  BOOL: boolean;
}

/**
 * Exactly one type key, every other one `?: undefined`: the spelling the AWS SDK and aws-lambda
 * use, so values of these types are assignable to theirs.
 */
type ExclusiveAttributeValue<Bin> = {
  [K in keyof AttributeTypes<Bin>]: { [P in K]: AttributeTypes<Bin>[P] } & {
    [P in Exclude<keyof AttributeTypes<Bin>, K>]?: undefined;
  };
}[keyof AttributeTypes<Bin>];

/** A DynamoDB AttributeValue in the Lambda (JSON) shape: binary as base64 strings. */
export type AttributeValue = ExclusiveAttributeValue<string>;

/** An item in DynamoDB JSON as a Lambda event carries it (binary as base64 text). */
export type AttributeMap = Record<string, AttributeValue>;

/**
 * The AWS SDK's shape (binary as Uint8Array): what `marshall(item, { binary: 'bytes' })` returns,
 * ready for a PutItemCommand, and what GetItem / Query return.
 */
export type SdkAttributeValue = ExclusiveAttributeValue<Uint8Array>;

/** An item in DynamoDB JSON as the AWS SDK takes it (binary as bytes). */
export type SdkAttributeMap = Record<string, SdkAttributeValue>;

/** A stream record's eventName. */
export type StreamEventName = 'INSERT' | 'MODIFY' | 'REMOVE';

/** What a stream record carries: keys only, the new image, the old image, or both. */
export type StreamViewType = 'KEYS_ONLY' | 'NEW_IMAGE' | 'OLD_IMAGE' | 'NEW_AND_OLD_IMAGES';

/** A stream record's userIdentity: `Service` / `dynamodb.amazonaws.com` on a TTL delete. */
export interface LambdaUserIdentity {
  type: string;
  principalId: string;
}

/** One record of a Lambda `DynamoDBStreamEvent`, as Lambda delivers it. */
export interface LambdaStreamRecord {
  eventID: string;
  eventName: StreamEventName;
  eventVersion?: string;
  eventSource?: string;
  awsRegion?: string;
  eventSourceARN?: string;
  userIdentity?: LambdaUserIdentity;
  dynamodb: {
    ApproximateCreationDateTime?: number;
    Keys: AttributeMap;
    NewImage?: AttributeMap;
    OldImage?: AttributeMap;
    SequenceNumber: string;
    SizeBytes?: number;
    StreamViewType?: StreamViewType;
  };
}

/** A DynamoDB stream event as Lambda delivers it to a function. */
export interface LambdaStreamEvent {
  Records: LambdaStreamRecord[];
}

/** The kinds a record is classified into. */
export type RecordKind = 'insert' | 'modify' | 'user-delete' | 'ttl-delete';

/**
 * Every kind of record, in the order the classifier names them: a route's `when` that takes every
 * change (`route({ when: RECORD_KINDS, to: changeLogArchive })`, the change log of docs/archive.md).
 */
export const RECORD_KINDS = Object.freeze([
  'insert',
  'modify',
  'user-delete',
  'ttl-delete',
] as const) satisfies readonly RecordKind[];

/**
 * Where a record came from. A sink that stores item state reads it to tell a live change from a
 * copy of the table taken earlier (a backfill), whose images may be older than what it holds.
 */
export type RecordOrigin =
  /** A DynamoDB stream: a Lambda event or GetRecords. */
  | { readonly source: 'dynamodb-stream' }
  /** A table's items read by a backfill: an export to S3 or a Scan, as of `snapshotTime`. */
  | {
      readonly source: 'backfill';
      /** How the items were read. */
      readonly from: 'export' | 'incremental-export' | 'scan';
      /** Epoch milliseconds: the export time, or when the scan started; no image is newer than the table at that instant. */
      readonly snapshotTime: number;
    }
  /**
   * A Kinesis data stream fed by the table's Kinesis streaming destination. Its records may
   * arrive duplicated and out of order: `creationTime` (not the sequence number) orders an item's changes.
   */
  | {
      readonly source: 'kinesis';
      /** The Kinesis record's sequence number (also the record's `sequenceNumber`). */
      readonly sequenceNumber: string;
      /** The Kinesis record's partition key. */
      readonly partitionKey: string;
      /** ApproximateCreationDateTime exactly as sent, in `precision` units since the epoch. */
      readonly creationTime: number;
      /** The table's ApproximateCreationDateTimePrecision, read from the value's magnitude. */
      readonly precision: 'MILLISECOND' | 'MICROSECOND';
    }
  /**
   * A change read back from an S3 archive by a replay (`tidewater/history`): the record as the
   * stream delivered it, so its creation time and sequence number are the original's (a version
   * guard orders it as it ordered the live record, and a second replay changes nothing).
   */
  | {
      readonly source: 'archive';
      /** The archive object the row was read from (the first copy, where several objects hold it). */
      readonly objectKey: string;
      /** The object's hour partition, `YYYY-MM-DDTHH` (UTC): the hour of the change's creation time. */
      readonly hour: string;
      /** Set for a change that was read from Kinesis Data Streams before it was archived. */
      readonly kinesis?: {
        readonly partitionKey: string;
        readonly creationTime: number;
        readonly precision: 'MILLISECOND' | 'MICROSECOND';
      };
    };

/** The origin of every record parsed from a stream. */
export const STREAM_ORIGIN: RecordOrigin = Object.freeze({ source: 'dynamodb-stream' });

/** An unmarshalled item. Values: string, number, bigint, NumberValue, boolean, null, Uint8Array, Set, array, object. */
export type Item = Record<string, unknown>;

/**
 * A classified stream record. Images are unmarshalled lazily, on first access, and cached.
 * `newImage` / `oldImage` are `undefined` when the stream view type does not carry them — never `{}`.
 */
interface ClassifiedRecordBase<T extends object> {
  readonly kind: RecordKind;
  readonly eventID: string;
  readonly eventName: StreamEventName;
  readonly sequenceNumber: string;
  /** Epoch seconds, as Lambda delivers it; undefined when the source did not carry it. */
  readonly approximateCreationTime: number | undefined;
  readonly sizeBytes: number | undefined;
  readonly eventSourceARN: string | undefined;
  /** Parsed from eventSourceARN (`arn:aws:dynamodb:<region>:<acct>:table/<name>/stream/<label>`). */
  readonly tableName: string | undefined;
  readonly awsRegion: string | undefined;
  /** The shard the record came from, when the source knows it (GetRecords does, a Lambda event does not). */
  readonly shardId: string | undefined;
  /** Where the record came from: a stream (the default), a backfill of the table's items or an archive replay. */
  readonly origin: RecordOrigin;
  readonly keys: Partial<T>;
  readonly newImage: T | undefined;
  readonly oldImage: T | undefined;
  /** The record in the Lambda shape, untouched. Archives write this, so they are lossless. */
  readonly raw: LambdaStreamRecord;
}

/** A record of one kind, with the event name that kind always has. */
interface KindRecord<K extends RecordKind, E extends StreamEventName, T extends object>
  extends ClassifiedRecordBase<T> {
  readonly kind: K;
  readonly eventName: E;
}

/** A parsed INSERT record: the new item in `newImage`. */
export interface InsertRecord<T extends object = Item> extends KindRecord<'insert', 'INSERT', T> {}
/** A parsed MODIFY record: the item before (`oldImage`) and after (`newImage`), as the stream view has them. */
export interface ModifyRecord<T extends object = Item> extends KindRecord<'modify', 'MODIFY', T> {}
/** A parsed REMOVE that a caller made (not TTL): the deleted item in `oldImage`. */
export interface UserDeleteRecord<T extends object = Item> extends KindRecord<'user-delete', 'REMOVE', T> {}
/** A parsed REMOVE that DynamoDB's TTL made: the expired item in `oldImage`. */
export interface TtlDeleteRecord<T extends object = Item> extends KindRecord<'ttl-delete', 'REMOVE', T> {}

/** A parsed stream record, by kind: insert, modify, user delete or TTL delete. */
export type ClassifiedRecord<T extends object = Item> =
  | InsertRecord<T>
  | ModifyRecord<T>
  | UserDeleteRecord<T>
  | TtlDeleteRecord<T>;

/** Narrow a record union by kind: `RecordOfKind<'ttl-delete'>` is `TtlDeleteRecord`. */
export type RecordOfKind<K extends RecordKind, T extends object = Item> = Extract<
  ClassifiedRecord<T>,
  { kind: K }
>;
