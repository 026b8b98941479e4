import { describe } from '../core/options.js';
import { MalformedRecordError, type MalformedRecordReason } from './errors.js';
import { kinesisSequenceNumberOf, MAX_KINESIS_SEQUENCE_DIGITS } from './kinesis-position.js';
import { isObject, isSequenceNumber } from './shape.js';
import type { RecordContext } from './stream-record.js';
import type { RecordOrigin } from './types.js';

/**
 * Kinesis Data Streams for DynamoDB. Each Lambda record is a Kinesis envelope whose `data` is the
 * base64 of a JSON change record: the DynamoDB stream record without SequenceNumber and
 * StreamViewType, plus `tableName` and `recordFormat`, its ApproximateCreationDateTime in
 * milliseconds or microseconds (the table's ApproximateCreationDateTimePrecision). Parsing turns
 * it into the Lambda shape of a DynamoDB stream record, so everything after the parser (routes,
 * sinks, schemas, windows) sees one kind of record; the Kinesis sequence number is its position.
 */

/** The same 2000–2100 window parse.ts allows for epoch seconds, in each precision's unit. */
const MIN_SECONDS = 946_684_800;
const MAX_SECONDS = 4_102_444_800;

/** The unit of an ApproximateCreationDateTime, read from its magnitude (the two ranges are 1000× apart). */
function precisionOf(value: number): 'MILLISECOND' | 'MICROSECOND' | undefined {
  if (value >= MIN_SECONDS * 1e3 && value < MAX_SECONDS * 1e3) return 'MILLISECOND';
  if (value >= MIN_SECONDS * 1e6 && value < MAX_SECONDS * 1e6) return 'MICROSECOND';
  return undefined;
}

/** What a Lambda Kinesis record carries that the parser reads. */
interface KinesisEnvelope {
  eventID?: unknown;
  eventSourceARN?: unknown;
  awsRegion?: unknown;
  kinesis?: { sequenceNumber?: unknown; partitionKey?: unknown; data?: unknown };
}

interface Identity {
  eventID: string | undefined;
  sequenceNumber: string | undefined;
}

function bad(identity: Identity, reason: MalformedRecordReason, detail: string, cause?: unknown): never {
  throw new MalformedRecordError(reason, detail, identity, cause === undefined ? undefined : { cause });
}

/**
 * The bytes of a base64 text, or undefined when it is not base64. Node's decoder skips what is
 * not in the alphabet, so a text with anything else decodes to fewer bytes than its length says.
 */
function base64Bytes(text: string): Buffer | undefined {
  const len = text.length;
  if (len % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, 'base64');
  const pad = len === 0 ? 0 : text.charCodeAt(len - 1) !== 61 ? 0 : text.charCodeAt(len - 2) === 61 ? 2 : 1;
  return bytes.length === (len / 4) * 3 - pad ? bytes : undefined;
}

/** The shard of a Lambda Kinesis record: its eventID is `<shardId>:<sequenceNumber>`. */
function shardOf(eventID: unknown): string | undefined {
  if (typeof eventID !== 'string') return undefined;
  const colon = eventID.indexOf(':');
  return colon > 0 ? eventID.slice(0, colon) : undefined;
}

/** A Kinesis record as a stream record in the Lambda shape, and the context it is parsed in. */
export interface DecodedKinesisRecord {
  readonly record: Record<string, unknown>;
  readonly context: RecordContext;
}

/**
 * One Lambda Kinesis record, decoded into the Lambda shape of a stream record, for the stream
 * record checks (parse.ts) to take over. Throws MalformedRecordError with the Kinesis sequence
 * number for data that is not base64, not JSON, not a DynamoDB change record, or whose creation
 * time has no known precision.
 */
export function decodeKinesisRecord(envelope: unknown, base: RecordContext): DecodedKinesisRecord {
  if (!isObject(envelope)) {
    throw new MalformedRecordError(
      'not-an-object',
      `a Kinesis record must be an object, got ${describe(envelope)}`,
      {},
    );
  }
  const e = envelope as KinesisEnvelope;
  const k = e.kinesis;
  const sequence = kinesisSequenceNumberOf(envelope);
  const identity: Identity = {
    eventID: typeof e.eventID === 'string' ? e.eventID : undefined,
    sequenceNumber: sequence,
  };
  if (!isObject(k)) bad(identity, 'invalid-kinesis-data', 'the record has no kinesis object');
  if (sequence === undefined)
    bad(identity, 'missing-sequence-number', 'kinesis.sequenceNumber must be a non-empty string');
  if (!isSequenceNumber(sequence, MAX_KINESIS_SEQUENCE_DIGITS)) {
    bad(
      identity,
      'invalid-sequence-number',
      `kinesis.sequenceNumber must be up to ${MAX_KINESIS_SEQUENCE_DIGITS} digits, got ${describe(sequence)}`,
    );
  }
  const partitionKey = k.partitionKey;
  if (typeof partitionKey !== 'string')
    bad(identity, 'invalid-field', 'kinesis.partitionKey must be a string');
  if (typeof k.data !== 'string') bad(identity, 'invalid-kinesis-data', 'kinesis.data must be a string');
  const bytes = base64Bytes(k.data);
  if (bytes === undefined) bad(identity, 'invalid-kinesis-data', 'kinesis.data is not base64');
  let payload: unknown;
  try {
    payload = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    bad(identity, 'invalid-kinesis-data', 'kinesis.data is not JSON', error);
  }
  if (!isObject(payload) || payload.eventSource !== 'aws:dynamodb' || !isObject(payload.dynamodb)) {
    bad(
      identity,
      'invalid-kinesis-data',
      'kinesis.data is not a DynamoDB change record (an object with eventSource "aws:dynamodb" and a dynamodb object)',
    );
  }
  if (typeof payload.eventID === 'string') identity.eventID = payload.eventID;
  if (typeof payload.tableName !== 'string' || payload.tableName === '')
    bad(identity, 'invalid-kinesis-data', 'tableName must be a non-empty string');
  if (payload.recordFormat !== undefined && payload.recordFormat !== 'application/json') {
    bad(
      identity,
      'invalid-kinesis-data',
      `recordFormat must be application/json, got ${describe(payload.recordFormat)}`,
    );
  }
  const d = payload.dynamodb;
  const created = d.ApproximateCreationDateTime;
  const precision = typeof created === 'number' ? precisionOf(created) : undefined;
  if (precision === undefined) {
    bad(
      identity,
      'invalid-creation-time',
      `dynamodb.ApproximateCreationDateTime must be epoch milliseconds or microseconds from 2000 to 2100, got ${describe(created)}`,
    );
  }
  const exact = created as number;
  // Not frozen, unlike a parser's shared origin: this one is the record's own, and freezing an
  // object per record costs more than the rest of its envelope.
  const origin: RecordOrigin = {
    source: 'kinesis',
    sequenceNumber: sequence,
    partitionKey,
    creationTime: exact,
    precision,
  };
  // Whole seconds, as DynamoDB Streams delivers them; the exact value stays on the origin.
  const seconds = Math.floor(precision === 'MILLISECOND' ? exact / 1e3 : exact / 1e6);
  const record = {
    eventID: payload.eventID,
    eventName: payload.eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: typeof payload.awsRegion === 'string' ? payload.awsRegion : e.awsRegion,
    eventSourceARN: e.eventSourceARN,
    userIdentity: payload.userIdentity ?? undefined,
    dynamodb: {
      ApproximateCreationDateTime: seconds,
      Keys: d.Keys,
      NewImage: d.NewImage,
      OldImage: d.OldImage,
      SequenceNumber: sequence,
      SizeBytes: d.SizeBytes,
    },
  };
  // Same property order as the stream parser's context: one hidden class for both.
  const context: RecordContext = {
    conversion: base.conversion,
    streamArn: undefined,
    shardId: shardOf(e.eventID),
    origin,
    tableName: payload.tableName,
  };
  return { record, context };
}
