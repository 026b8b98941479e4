import {
  type LambdaStreamRecord,
  type StreamBatchInfo,
  type StreamInvocationRecord,
  streamBatchInfoOf,
} from '../records/index.js';
import { DEAD_LETTER_POINTER_TYPE, DEAD_LETTER_TYPE } from '../sinks/dead-letter-message.js';
import { RedriveMessageError } from './errors.js';

/** What one SQS message or S3 object asks redrive to do. */
export type RedriveMessage =
  /** Lambda's on-failure record: the range is read back from the stream (S3 copies also hold the batch as `records`). */
  | { kind: 'on-failure'; record: StreamInvocationRecord; records?: LambdaStreamRecord[] }
  /** tidewater's dead-letter entry: it carries the record itself. */
  | { kind: 'dead-letter'; records: unknown[]; sequenceNumber: string | undefined }
  /** An SqsDeadLetterSink entry too large for SQS: the entry is in S3. */
  | { kind: 'dead-letter-pointer'; bucket: string; key: string };

const ON_FAILURE_VERSION = '1.0';
const DEAD_LETTER_VERSION = 1;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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
  if ('DDBStreamBatchInfo' in value) return onFailure(value, source, streamArn);
  if (value.type === DEAD_LETTER_TYPE || value.type === DEAD_LETTER_POINTER_TYPE)
    return deadLetter(value, source, streamArn);
  throw new RedriveMessageError(
    'unknown-shape',
    source,
    'neither a Lambda on-failure record (DDBStreamBatchInfo) nor a tidewater dead-letter entry',
  );
}

const SEQUENCE = /^\d{1,40}$/;

function onFailure(value: Record<string, unknown>, source: string, streamArn: string): RedriveMessage {
  if (value.version !== ON_FAILURE_VERSION)
    throw new RedriveMessageError(
      'unknown-version',
      source,
      `on-failure record version ${JSON.stringify(value.version)}, only ${ON_FAILURE_VERSION} is known`,
    );
  const info = streamBatchInfoOf(value);
  if (!info || !SEQUENCE.test(info.startSequenceNumber) || !SEQUENCE.test(info.endSequenceNumber))
    throw new RedriveMessageError(
      'malformed',
      source,
      'DDBStreamBatchInfo lacks a shard, stream or sequence range',
    );
  if (BigInt(info.startSequenceNumber) > BigInt(info.endSequenceNumber))
    throw new RedriveMessageError('malformed', source, 'startSequenceNumber is after endSequenceNumber');
  checkStream(info.streamArn, source, streamArn);
  const record = value as unknown as StreamInvocationRecord;
  if (typeof value.payload !== 'string') return { kind: 'on-failure', record };
  return { kind: 'on-failure', record, records: payloadRecords(value.payload, source, info) };
}

/** The S3 destination's `payload`: the event as JSON text. */
function payloadRecords(payload: string, source: string, info: StreamBatchInfo): LambdaStreamRecord[] {
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
  return event.Records as LambdaStreamRecord[];
}

function deadLetter(value: Record<string, unknown>, source: string, streamArn: string): RedriveMessage {
  if (value.version !== DEAD_LETTER_VERSION)
    throw new RedriveMessageError(
      'unknown-version',
      source,
      `dead-letter version ${JSON.stringify(value.version)}, only ${DEAD_LETTER_VERSION} is known`,
    );
  if (value.eventSourceARN !== undefined && value.eventSourceARN !== streamArn)
    checkStream(String(value.eventSourceARN), source, streamArn);
  if (value.type === DEAD_LETTER_POINTER_TYPE) {
    if (typeof value.bucket !== 'string' || typeof value.key !== 'string')
      throw new RedriveMessageError('malformed', source, 'dead-letter pointer without bucket and key');
    return { kind: 'dead-letter-pointer', bucket: value.bucket, key: value.key };
  }
  if (!isObject(value.record))
    throw new RedriveMessageError('malformed', source, 'dead-letter entry without a record');
  const sequenceNumber = typeof value.sequenceNumber === 'string' ? value.sequenceNumber : undefined;
  return { kind: 'dead-letter', records: [value.record], sequenceNumber };
}

function checkStream(actual: string, source: string, expected: string): void {
  if (actual !== expected)
    throw new RedriveMessageError('other-stream', source, `names stream ${actual}, not ${expected}`);
}
