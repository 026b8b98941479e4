import type { LambdaStreamRecord, StreamBatchInfo, StreamInvocationRecord } from '../records/index.js';
import type { LambdaKinesisRecord } from '../records/kinesis-encode.js';
import { MAX_KINESIS_SEQUENCE_DIGITS } from '../records/kinesis-position.js';
import { batchInfoUnder } from '../records/on-failure-record.js';
import { DEAD_LETTER_POINTER_TYPE, DEAD_LETTER_TYPE } from '../sinks/dead-letter-message.js';
import { RedriveMessageError } from './errors.js';

/** A record as Lambda delivers it from either stream: what redrive hands the function. */
export type RedriveRecord = LambdaStreamRecord | LambdaKinesisRecord;

/** Which stream an on-failure record's batch was read from, by the key its batch info is under. */
export type RedriveSource = 'dynamodb-stream' | 'kinesis';

/** An on-failure record as read: Lambda's fields, its batch info under the source's key. */
export type OnFailureMessageRecord = Record<string, unknown> &
  Omit<StreamInvocationRecord, 'DDBStreamBatchInfo'>;

const BATCH_INFO_KEY = { 'dynamodb-stream': 'DDBStreamBatchInfo', kinesis: 'KinesisBatchInfo' } as const;

/** What one SQS message or S3 object asks redrive to do. */
export type RedriveMessage =
  /**
   * Lambda's on-failure record (`record`, its batch `info`): the range is read back from the
   * stream — a DynamoDB stream, or the Kinesis stream a table's changes are streamed to — unless
   * the S3 destination's copy also holds the batch (`records`).
   */
  | {
      kind: 'on-failure';
      source: RedriveSource;
      info: StreamBatchInfo;
      record: OnFailureMessageRecord;
      records?: RedriveRecord[];
    }
  /** tidewater's dead-letter entry: it carries the record itself. */
  | {
      kind: 'dead-letter';
      records: RedriveRecord[];
      sequenceNumber: string | undefined;
      /** When the entry was made (its `at`, epoch milliseconds), if it says so readably. */
      madeAt: number | undefined;
    }
  /** An SqsDeadLetterSink entry too large for SQS: the entry is in S3. */
  | { kind: 'dead-letter-pointer'; bucket: string; key: string };

const ON_FAILURE_VERSION = '1.0';
const DEAD_LETTER_VERSION = 1;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Characters of a message's own text (a version, an ARN) an error repeats: a hostile field stays out of the report. */
const SHOWN_CHARS = 120;

/** A value from the message as an error names it: short text as it is, anything else by its type. */
function shown(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined)
    return String(value);
  if (typeof value !== 'string') return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  const json = JSON.stringify(value);
  return json.length <= SHOWN_CHARS ? json : `${json.slice(0, SHOWN_CHARS)}… (${value.length} characters)`;
}

/**
 * Reads an SQS body or S3 object: an on-failure record (raw, or inside an SNS notification as an
 * SNS-to-SQS subscription without raw delivery stores it), a dead-letter entry or pointer.
 * `source` names the message in errors; `streamArn` is the stream being redriven: anything from
 * another stream is refused, so one queue shared by two mappings cannot cross them.
 */
export function decodeRedriveMessage(text: string, source: string, streamArn: string): RedriveMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
    if (isObject(value) && value.Type === 'Notification' && typeof value.Message === 'string')
      value = JSON.parse(value.Message);
  } catch (error) {
    throw new RedriveMessageError('malformed', source, 'not JSON', { cause: error });
  }
  if (!isObject(value)) throw new RedriveMessageError('malformed', source, 'not a JSON object');
  if ('DDBStreamBatchInfo' in value) return onFailure(value, 'dynamodb-stream', source, streamArn);
  if ('KinesisBatchInfo' in value) return onFailure(value, 'kinesis', source, streamArn);
  if (value.type === DEAD_LETTER_TYPE || value.type === DEAD_LETTER_POINTER_TYPE)
    return deadLetter(value, source, streamArn);
  throw new RedriveMessageError(
    'unknown-shape',
    source,
    'neither a Lambda on-failure record (DDBStreamBatchInfo or KinesisBatchInfo) nor a tidewater dead-letter entry',
  );
}

/** Sequence numbers: DynamoDB Streams' have up to 40 digits, Kinesis's more. */
const SEQUENCE: Record<RedriveSource, RegExp> = {
  'dynamodb-stream': /^\d{1,40}$/,
  kinesis: new RegExp(`^\\d{1,${MAX_KINESIS_SEQUENCE_DIGITS}}$`),
};

/** The batch info of `stream`'s key, when its range is of that stream's sequence numbers. */
function batchInfoIn(value: Record<string, unknown>, stream: RedriveSource): StreamBatchInfo | undefined {
  const info = batchInfoUnder(value, BATCH_INFO_KEY[stream]);
  const sequence = SEQUENCE[stream];
  return info && sequence.test(info.startSequenceNumber) && sequence.test(info.endSequenceNumber)
    ? info
    : undefined;
}

function onFailure(
  value: Record<string, unknown>,
  stream: RedriveSource,
  source: string,
  streamArn: string,
): RedriveMessage {
  if (value.version !== ON_FAILURE_VERSION)
    throw new RedriveMessageError(
      'unknown-version',
      source,
      `on-failure record version ${shown(value.version)}, only ${ON_FAILURE_VERSION} is known`,
    );
  const info = batchInfoIn(value, stream);
  if (!info)
    throw new RedriveMessageError(
      'malformed',
      source,
      `${BATCH_INFO_KEY[stream]} lacks a shard, stream or sequence range`,
    );
  if (BigInt(info.startSequenceNumber) > BigInt(info.endSequenceNumber))
    throw new RedriveMessageError('malformed', source, 'startSequenceNumber is after endSequenceNumber');
  checkStream(info.streamArn, source, streamArn);
  const message = {
    kind: 'on-failure',
    source: stream,
    info,
    record: value as OnFailureMessageRecord,
  } as const;
  if (typeof value.payload !== 'string') return message;
  return {
    ...message,
    records: checkedRecords(payloadRecords(value.payload, source, info), source, streamArn),
  };
}

/** The S3 destination's `payload`: the event as JSON text. */
function payloadRecords(payload: string, source: string, info: StreamBatchInfo): unknown[] {
  let event: unknown;
  try {
    event = JSON.parse(payload);
  } catch (error) {
    throw new RedriveMessageError('malformed', source, 'payload is not JSON', { cause: error });
  }
  if (!isObject(event) || !Array.isArray(event.Records) || event.Records.length !== info.batchSize)
    throw new RedriveMessageError(
      'malformed',
      source,
      `payload does not hold the batch's ${info.batchSize} records`,
    );
  return event.Records;
}

function deadLetter(value: Record<string, unknown>, source: string, streamArn: string): RedriveMessage {
  if (value.version !== DEAD_LETTER_VERSION)
    throw new RedriveMessageError(
      'unknown-version',
      source,
      `dead-letter version ${shown(value.version)}, only ${DEAD_LETTER_VERSION} is known`,
    );
  if (value.eventSourceARN !== undefined) checkStream(value.eventSourceARN, source, streamArn);
  if (value.type === DEAD_LETTER_POINTER_TYPE) {
    if (typeof value.bucket !== 'string' || typeof value.key !== 'string')
      throw new RedriveMessageError('malformed', source, 'dead-letter pointer without bucket and key');
    return { kind: 'dead-letter-pointer', bucket: value.bucket, key: value.key };
  }
  if (!isObject(value.record))
    throw new RedriveMessageError('malformed', source, 'dead-letter entry without a record');
  const sequenceNumber = typeof value.sequenceNumber === 'string' ? value.sequenceNumber : undefined;
  const madeAt = typeof value.at === 'string' ? Date.parse(value.at) : Number.NaN;
  return {
    kind: 'dead-letter',
    records: checkedRecords([value.record], source, streamArn),
    sequenceNumber,
    madeAt: Number.isFinite(madeAt) ? madeAt : undefined,
  };
}

function checkStream(actual: unknown, source: string, expected: string): void {
  if (actual !== expected)
    throw new RedriveMessageError('other-stream', source, `names stream ${shown(actual)}, not ${expected}`);
}

/** A record's sequence number as Lambda delivers it: the Kinesis one, or the DynamoDB stream's. */
function sequenceOf(record: Record<string, unknown>): unknown {
  // As the target and recordIdentity read it: a `kinesis` key makes it a Kinesis record.
  if ('kinesis' in record) return isObject(record.kinesis) ? record.kinesis.sequenceNumber : undefined;
  return isObject(record.dynamodb) ? record.dynamodb.SequenceNumber : undefined;
}

/**
 * The records a message carries, each checked on its own against the stream being redriven: the
 * envelope's optional `eventSourceARN` says nothing of what is inside, and a record of another
 * table or account must never reach the function. A record needs its stream and a sequence number
 * (what the function's partial batch response, and redrive's own bookkeeping, name it by).
 */
function checkedRecords(records: readonly unknown[], source: string, streamArn: string): RedriveRecord[] {
  const kinesis = SEQUENCE.kinesis;
  for (const [index, record] of records.entries()) {
    if (!isObject(record))
      throw new RedriveMessageError('malformed', source, `record ${index} is not an object`);
    if (record.eventSourceARN !== streamArn)
      throw new RedriveMessageError(
        'other-stream',
        source,
        `record ${index} is of stream ${shown(record.eventSourceARN)}, not ${streamArn}`,
      );
    const sequence = sequenceOf(record);
    if (typeof sequence !== 'string' || !kinesis.test(sequence))
      throw new RedriveMessageError('malformed', source, `record ${index} has no sequence number`);
  }
  return records as RedriveRecord[];
}

/**
 * What names one record across messages: its stream and its sequence number as a number (DynamoDB
 * Local pads them with zeros, a copy may not). Two messages holding one record hold the same failure.
 */
export function recordIdentity(record: RedriveRecord): string {
  const sequence = 'kinesis' in record ? record.kinesis.sequenceNumber : record.dynamodb.SequenceNumber;
  return `${record.eventSourceARN}\n${BigInt(sequence ?? '0')}`;
}
