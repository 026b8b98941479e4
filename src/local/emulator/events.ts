import { defineOptions } from '../../core/index.js';
import type {
  AttributeMap,
  Item,
  LambdaStreamEvent,
  LambdaStreamRecord,
  StreamViewType,
} from '../../records/index.js';
import { marshall } from '../../records/index.js';

/** A Lambda event carries binary as base64. */
const LAMBDA_SHAPE = { binary: 'base64' } as const;

/** Options of streamEvents: the table, stream and keys of the records it builds. */
export interface EventBuilderOptions {
  /** Table the records come from; default `test-table`. */
  tableName?: string;
  /** Default `us-east-1`. */
  region?: string;
  /** Default `123456789012`. */
  accountId?: string;
  /** Stream label (part of the ARN); default a fixed timestamp so events are reproducible. */
  streamLabel?: string;
  /** Names of the key attributes, in the table's key schema; default `['pk']`. */
  keyAttributes?: string[];
  streamViewType?: StreamViewType;
  /** First sequence number handed out; default 100000000000000000001 (21 digits, as DynamoDB Streams). */
  firstSequenceNumber?: bigint;
  /** Epoch seconds for ApproximateCreationDateTime; default a fixed instant. A function is called per record. */
  now?: number | (() => number);
}

const readOptions = defineOptions<EventBuilderOptions>()('StreamEventBuilder', {
  tableName: { kind: 'nonEmptyString', default: 'test-table' },
  region: { kind: 'nonEmptyString', default: 'us-east-1' },
  accountId: { kind: 'nonEmptyString', default: '123456789012' },
  streamLabel: { kind: 'nonEmptyString', default: '2026-01-01T00:00:00.000' },
  keyAttributes: { kind: 'custom', expected: 'a list of attribute names', check: Array.isArray },
  streamViewType: { kind: 'enum', values: ['KEYS_ONLY', 'NEW_IMAGE', 'OLD_IMAGE', 'NEW_AND_OLD_IMAGES'] },
  firstSequenceNumber: { kind: 'custom', expected: 'a bigint', check: (value) => typeof value === 'bigint' },
  now: {
    kind: 'custom',
    expected: 'epoch seconds, or a function returning them',
    check: (value) => typeof value === 'number' || typeof value === 'function',
  },
});

const DEFAULT_EPOCH = 1_767_225_600; // 2026-01-01T00:00:00Z

/**
 * Builds valid Lambda `DynamoDBStreamEvent` records from plain items: marshalled exactly (big
 * numbers, sets, binary), increasing 21-digit sequence numbers, a realistic eventSourceARN, and
 * the TTL service identity on TTL deletes. One builder = one stream shard's worth of records.
 */
export class StreamEventBuilder {
  readonly streamArn: string;
  readonly region: string;
  private nextSequence: bigint;
  private eventCounter = 0;
  private readonly keyAttributes: string[];
  private readonly viewType: StreamViewType;
  private readonly clock: () => number;

  constructor(options: EventBuilderOptions = {}) {
    const o = readOptions(options);
    this.region = o.region;
    this.streamArn = `arn:aws:dynamodb:${this.region}:${o.accountId}:table/${o.tableName}/stream/${o.streamLabel}`;
    this.nextSequence = o.firstSequenceNumber ?? 100000000000000000001n;
    this.keyAttributes = o.keyAttributes ?? ['pk'];
    this.viewType = o.streamViewType ?? 'NEW_AND_OLD_IMAGES';
    const now = o.now;
    this.clock = typeof now === 'function' ? now : () => now ?? DEFAULT_EPOCH;
  }

  insert(newItem: Item): LambdaStreamRecord {
    return this.record('INSERT', newItem, undefined, newItem);
  }

  modify(oldItem: Item, newItem: Item): LambdaStreamRecord {
    return this.record('MODIFY', newItem, oldItem, newItem);
  }

  /** A REMOVE made by a caller (no service identity). */
  userDelete(oldItem: Item): LambdaStreamRecord {
    return this.record('REMOVE', oldItem, oldItem, undefined);
  }

  /** A REMOVE made by DynamoDB's TTL process: `userIdentity {type: Service, principalId: dynamodb.amazonaws.com}`. */
  ttlDelete(oldItem: Item): LambdaStreamRecord {
    const record = this.record('REMOVE', oldItem, oldItem, undefined);
    record.userIdentity = { type: 'Service', principalId: 'dynamodb.amazonaws.com' };
    return record;
  }

  event(...records: LambdaStreamRecord[]): LambdaStreamEvent {
    return { Records: records };
  }

  private record(
    eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
    keySource: Item,
    oldItem: Item | undefined,
    newItem: Item | undefined,
  ): LambdaStreamRecord {
    const keys: Item = {};
    for (const name of this.keyAttributes) {
      if (keySource[name] === undefined)
        throw new TypeError(`StreamEventBuilder: the item has no key attribute '${name}'`);
      keys[name] = keySource[name];
    }
    const sequenceNumber = (this.nextSequence++).toString().padStart(21, '0');
    const dynamodb: LambdaStreamRecord['dynamodb'] = {
      ApproximateCreationDateTime: this.clock(),
      Keys: marshall(keys, LAMBDA_SHAPE),
      SequenceNumber: sequenceNumber,
      SizeBytes: 0,
      StreamViewType: this.viewType,
    };
    let size = jsonSize(dynamodb.Keys);
    if (newItem && (this.viewType === 'NEW_IMAGE' || this.viewType === 'NEW_AND_OLD_IMAGES')) {
      dynamodb.NewImage = marshall(newItem, LAMBDA_SHAPE);
      size += jsonSize(dynamodb.NewImage);
    }
    if (oldItem && (this.viewType === 'OLD_IMAGE' || this.viewType === 'NEW_AND_OLD_IMAGES')) {
      dynamodb.OldImage = marshall(oldItem, LAMBDA_SHAPE);
      size += jsonSize(dynamodb.OldImage);
    }
    dynamodb.SizeBytes = size;
    this.eventCounter++;
    return {
      eventID: `${this.eventCounter.toString(16).padStart(8, '0')}${sequenceNumber.slice(-24)}`,
      eventName,
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: this.region,
      eventSourceARN: this.streamArn,
      dynamodb,
    };
  }
}

// Close enough to DynamoDB's own accounting for tests that look at SizeBytes at all.
function jsonSize(map: AttributeMap): number {
  return Buffer.byteLength(JSON.stringify(map));
}

/** Shorthand: a builder with the given options. */
export function streamEvents(options?: EventBuilderOptions): StreamEventBuilder {
  return new StreamEventBuilder(options);
}
