import { defineOptions, describe } from '../core/options.js';
import {
  classify,
  heuristicAttribute,
  identityOf,
  TTL_HEURISTIC_OPTION,
  type TtlHeuristicOptions,
} from './classify.js';
import {
  EventSourceMismatchError,
  MalformedRecordError,
  type MalformedRecordReason,
  NotAStreamEventError,
} from './errors.js';
import { decodeKinesisRecord } from './kinesis.js';
import { MAX_KINESIS_SEQUENCE_DIGITS } from './kinesis-position.js';
import { NUMBERS_OPTION, type NumberPolicy, numberConverter } from './numbers.js';
import { throwIfOnFailureRecord } from './on-failure-record.js';
import { isObject, isSequenceNumber } from './shape.js';
import { type RecordContext, StreamRecord } from './stream-record.js';
import { type ClassifiedRecord, type Item, type RecordOrigin, STREAM_ORIGIN } from './types.js';
import { imageConversion } from './unmarshall.js';
import { isValidAttributeMap } from './validate.js';

/** Where a batch's records come from. */
export type RecordSource = 'dynamodb-stream' | 'kinesis';

/** Options of parseStreamEvent and createRecordParser: stream identity, images, numbers, TTL heuristic. */
export interface ParseOptions {
  /** The stream's ARN: GetRecords records lack eventSourceARN, so tableName needs it. */
  streamArn?: string;
  /** The shard the records were read from, when known (GetRecords). */
  shardId?: string;
  /**
   * Where the records come from, set on every record as `origin`. Default: a DynamoDB stream.
   * Backfills set it; a stream consumer never needs to.
   */
  origin?: RecordOrigin;
  /**
   * The records' source: a DynamoDB stream (Lambda event or GetRecords; the default) or Lambda
   * records of a Kinesis data stream fed by the table's Kinesis streaming destination.
   */
  source?: RecordSource;
  /** How `N` values unmarshal. Default `'exact'`. */
  numbers?: NumberPolicy;
  /** Opt-in TTL-delete inference for global-table replicas; off by default. See TtlHeuristicOptions. */
  ttlHeuristic?: TtlHeuristicOptions | false;
  /**
   * Unmarshal keys and images during parsing instead of on first access, so a bad
   * AttributeValue or `N` surfaces as a MalformedRecordError from the parse call (where the
   * pipeline dead-letters it) rather than later from a getter. Default false.
   */
  eager?: boolean;
  /**
   * Check keys and images structurally during parsing (what unmarshall checks: one type key,
   * S/N/B/BOOL/NULL/set/L/M shapes, number syntax, base64) without unmarshalling them: a bad
   * AttributeValue throws the same MalformedRecordError (reason, path) from the parse call that
   * the getter would, while valid images stay lazy. Also checks DynamoDB's limits (38 digits,
   * 1E-130 … 9.99…E+125, no empty set, no member twice, 32 levels). Allocates nothing for a
   * valid record but to compare some set members (see isValidAttributeMap).
   * Default false. Implied by `eager`.
   */
  validate?: boolean;
}

/** What a parser does with numbers, TTL deletes of replicas and images: the options a pipeline passes on. */
export type ImageParseOptions = Pick<ParseOptions, 'numbers' | 'ttlHeuristic' | 'eager' | 'validate'>;

const BOOLEAN_OFF = { kind: 'boolean', default: false } as const;

const readOptions = /* @__PURE__ */ defineOptions<ParseOptions>()('parse', {
  streamArn: { kind: 'nonEmptyString' },
  shardId: { kind: 'nonEmptyString' },
  source: { kind: 'enum', values: ['dynamodb-stream', 'kinesis'] },
  origin: {
    kind: 'custom',
    expected:
      "{ source: 'dynamodb-stream' }, { source: 'backfill', from, snapshotTime }, { source: 'kinesis', sequenceNumber, partitionKey, creationTime, precision } or { source: 'archive', objectKey, hour }",
    check: isOrigin,
  },
  numbers: NUMBERS_OPTION,
  ttlHeuristic: TTL_HEURISTIC_OPTION,
  eager: BOOLEAN_OFF,
  validate: BOOLEAN_OFF,
});

// The pipeline's reader: a stream handler's bundle links neither the origin check nor its text.
// The rules are named, not spread from a shared object: a spread would keep readOptions in
// every bundle (the bundler cannot tell it has no side effect).
const readImageOptions = /* @__PURE__ */ defineOptions<ImageParseOptions>()('parse', {
  numbers: NUMBERS_OPTION,
  ttlHeuristic: TTL_HEURISTIC_OPTION,
  eager: BOOLEAN_OFF,
  validate: BOOLEAN_OFF,
});

function isOrigin(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const o = value as Record<string, unknown>;
  if (o.source === 'dynamodb-stream') return true;
  if (o.source === 'kinesis') {
    return (
      typeof o.sequenceNumber === 'string' &&
      typeof o.partitionKey === 'string' &&
      typeof o.creationTime === 'number' &&
      (o.precision === 'MILLISECOND' || o.precision === 'MICROSECOND')
    );
  }
  if (o.source === 'archive') {
    return (
      typeof o.objectKey === 'string' &&
      typeof o.hour === 'string' &&
      (o.kinesis === undefined || (o.kinesis !== null && typeof o.kinesis === 'object'))
    );
  }
  return (
    o.source === 'backfill' &&
    (o.from === 'export' || o.from === 'incremental-export' || o.from === 'scan') &&
    typeof o.snapshotTime === 'number' &&
    Number.isFinite(o.snapshotTime)
  );
}

/** What parsing does with keys and images beyond the record's own fields. */
const LAZY = 0;
const VALIDATE = 1;
const EAGER = 2;
type Images = typeof LAZY | typeof VALIDATE | typeof EAGER;

/** A compiled parser of one stream record into a ClassifiedRecord. */
export type RecordParser = <T extends Item = Item>(record: unknown) => ClassifiedRecord<T>;

const EVENT_NAMES = new Set(['INSERT', 'MODIFY', 'REMOVE']);

/** DynamoDB Streams documents sequence numbers as 21 to 40 digits; shorter ones are accepted (built events). */
const MAX_SEQUENCE_DIGITS = 40;

/**
 * The epoch seconds an ApproximateCreationDateTime may have: from 2000-01-01 to 2100-01-01 UTC.
 * Well around any record DynamoDB Streams (2014) has made, and far from the millisecond (×1000)
 * and microsecond readings of the same instants, which would otherwise be filed under the year
 * 58,000 and never found by a reader again.
 */
const MIN_CREATION_SECONDS = 946_684_800;
const MAX_CREATION_SECONDS = 4_102_444_800;

// A module function rather than a per-record closure, and the identity object only built on
// failure: checking a valid record allocates nothing.
function bad(record: Record<string, unknown>, reason: MalformedRecordReason, detail: string): never {
  throw new MalformedRecordError(reason, detail, identityOf(record));
}

function checkedRecord(
  record: unknown,
  context: RecordContext,
  ttlAttribute: string | undefined,
  images: Images,
  maxSequenceDigits = MAX_SEQUENCE_DIGITS,
): StreamRecord {
  if (!isObject(record)) {
    throw new MalformedRecordError(
      'not-an-object',
      `a stream record must be an object, got ${describe(record)}`,
      {},
    );
  }
  if (typeof record.eventID !== 'string') bad(record, 'missing-event-id', 'eventID must be a string');
  if (!EVENT_NAMES.has(record.eventName as string)) {
    bad(
      record,
      'unknown-event-name',
      `eventName must be INSERT, MODIFY or REMOVE, got ${describe(record.eventName)}`,
    );
  }
  const d = record.dynamodb;
  if (!isObject(d))
    return bad(record, 'missing-dynamodb', `the record has no dynamodb object (got ${describe(d)})`);
  const sequence = d.SequenceNumber;
  if (typeof sequence !== 'string' || sequence === '')
    bad(record, 'missing-sequence-number', 'dynamodb.SequenceNumber must be a non-empty string');
  if (!isSequenceNumber(sequence as string, maxSequenceDigits)) {
    bad(
      record,
      'invalid-sequence-number',
      `dynamodb.SequenceNumber must be up to ${maxSequenceDigits} digits, got ${describe(sequence)}`,
    );
  }
  if (!isObject(d.Keys))
    bad(record, 'missing-keys', `dynamodb.Keys must be an attribute map, got ${describe(d.Keys)}`);
  if (d.NewImage !== undefined && !isObject(d.NewImage))
    bad(record, 'invalid-field', 'dynamodb.NewImage must be an attribute map');
  if (d.OldImage !== undefined && !isObject(d.OldImage))
    bad(record, 'invalid-field', 'dynamodb.OldImage must be an attribute map');
  const created = d.ApproximateCreationDateTime;
  if (created !== undefined) {
    const seconds =
      typeof created === 'number' ? created : created instanceof Date ? created.getTime() / 1000 : Number.NaN;
    if (!(seconds >= MIN_CREATION_SECONDS && seconds < MAX_CREATION_SECONDS)) {
      bad(
        record,
        'invalid-creation-time',
        typeof created === 'number' || created instanceof Date
          ? `dynamodb.ApproximateCreationDateTime must be epoch seconds from 2000 to 2100, got ${describe(created)}${seconds >= MIN_CREATION_SECONDS * 1000 ? ' (milliseconds?)' : ''}`
          : `dynamodb.ApproximateCreationDateTime must be epoch seconds or a Date, got ${describe(created)}`,
      );
    }
  }
  if (d.SizeBytes !== undefined && typeof d.SizeBytes !== 'number')
    bad(record, 'invalid-field', 'dynamodb.SizeBytes must be a number');
  if (record.eventSourceARN !== undefined && typeof record.eventSourceARN !== 'string') {
    bad(record, 'invalid-field', 'eventSourceARN must be a string');
  }
  if (record.awsRegion !== undefined && typeof record.awsRegion !== 'string')
    bad(record, 'invalid-field', 'awsRegion must be a string');
  const ui = record.userIdentity ?? record.UserIdentity;
  if (ui !== undefined && ui !== null && typeof ui !== 'object')
    bad(record, 'invalid-field', 'userIdentity must be an object');
  const kind = classify(record, ttlAttribute)!;
  const parsed = new StreamRecord(record as never, kind, context);
  if (images === EAGER) {
    void parsed.keys;
    void parsed.newImage;
    void parsed.oldImage;
  } else if (images === VALIDATE) {
    // On "no", the getter runs the real converter, which throws the exact error (and if the two
    // ever disagreed, the image is simply valid and now cached).
    if (!isValidAttributeMap(d.Keys)) void parsed.keys;
    if (d.NewImage !== undefined && !isValidAttributeMap(d.NewImage)) void parsed.newImage;
    if (d.OldImage !== undefined && !isValidAttributeMap(d.OldImage)) void parsed.oldImage;
  }
  return parsed;
}

/** A parser's options, read and precomputed once. */
function parserSettings(o: ReturnType<typeof readImageOptions> & Partial<ReturnType<typeof readOptions>>) {
  const context: RecordContext = {
    conversion: imageConversion(numberConverter(o.numbers)),
    streamArn: o.streamArn,
    shardId: o.shardId,
    origin: o.origin === undefined ? STREAM_ORIGIN : Object.freeze({ ...o.origin }),
    tableName: undefined,
  };
  const images: Images = o.eager ? EAGER : o.validate ? VALIDATE : LAZY;
  return { context, ttlAttribute: heuristicAttribute(o.ttlHeuristic, 'parse'), images };
}

function streamParser({ context, ttlAttribute, images }: ReturnType<typeof parserSettings>): RecordParser {
  // A record of the Lambda shape that came from Kinesis (an archive's row) keeps its Kinesis position.
  const origin = context.origin;
  const kinesis =
    origin.source === 'kinesis' || (origin.source === 'archive' && origin.kinesis !== undefined);
  const digits = kinesis ? MAX_KINESIS_SEQUENCE_DIGITS : MAX_SEQUENCE_DIGITS;
  return ((record: unknown) => checkedRecord(record, context, ttlAttribute, images, digits)) as RecordParser;
}

/**
 * A parser with its options validated and precomputed once: the per-record path does no option
 * work. parseStreamRecord / parseStreamEvent are this, made on each call.
 */
export function createRecordParser(options?: ParseOptions): RecordParser {
  const o = readOptions(options);
  const settings = parserSettings(o);
  if (o.source !== 'kinesis') return streamParser(settings);
  const { context, ttlAttribute, images } = settings;
  return ((envelope: unknown) => {
    const decoded = decodeKinesisRecord(envelope, context);
    return checkedRecord(decoded.record, decoded.context, ttlAttribute, images, MAX_KINESIS_SEQUENCE_DIGITS);
  }) as RecordParser;
}

/**
 * @internal createRecordParser for the Lambda shape of a stream handler's batches, taking only the
 * options a pipeline passes on (any other is an unknown option): what a DynamoDB Streams pipeline
 * parses with, so its bundle links no Kinesis decoder and no origin check.
 */
export function createStreamRecordParser(options?: ImageParseOptions): RecordParser {
  return streamParser(parserSettings(readImageOptions(options)));
}

/**
 * One record, either wire shape. Throws MalformedRecordError (with eventID / sequenceNumber when
 * the record has them) when it is not a valid stream record.
 */
export function parseStreamRecord<T extends Item = Item>(
  record: unknown,
  options?: ParseOptions,
): ClassifiedRecord<T> {
  return createRecordParser(options)<T>(record);
}

function eventSourceOf(value: unknown): unknown {
  return isObject(value) ? (value.eventSource ?? value.EventSource) : undefined;
}

/** What a handler accepts: one source, or whichever the batch's first record says. */
export type ExpectedSource = RecordSource | 'auto';

const EVENT_SOURCES: Record<RecordSource, string> = {
  'dynamodb-stream': 'aws:dynamodb',
  kinesis: 'aws:kinesis',
};

function recordListOf(input: unknown): unknown[] {
  if (Array.isArray(input)) return input;
  if (!isObject(input))
    throw new NotAStreamEventError(`expected an object or an array, got ${describe(input)}`);
  if ('Records' in input) {
    const list = input.Records;
    if (Array.isArray(list)) return list;
    // GetRecords leaves Records out of a page with nothing in it.
    if (list === undefined && ('NextShardIterator' in input || '$metadata' in input)) return [];
    throw new NotAStreamEventError(`Records must be an array, got ${describe(list)}`);
  }
  if ('dynamodb' in input || 'eventName' in input || 'kinesis' in input) return [input];
  throwIfOnFailureRecord(input);
  const keys = Object.keys(input).slice(0, 5).join(', ');
  throw new NotAStreamEventError(`no Records array and not a stream record (keys: ${keys || 'none'})`);
}

/**
 * The records of a batch, unparsed, and their source, after checking that every record comes
 * from the expected one: a Kinesis batch for a DynamoDB Streams handler (or the reverse, or a mix)
 * is an EventSourceMismatchError, another service's batch (SQS, SNS, S3) a NotAStreamEventError —
 * both fail whole rather than be dead-lettered record by record. A stream record may lack
 * eventSource (GetRecords, built events); a Kinesis record may not. `'auto'` takes the source of
 * the first record. One pass over the batch: the parsers then run without a per-record dispatch.
 */
export function eventRecordsOf(
  input: unknown,
  expected: ExpectedSource = 'dynamodb-stream',
): { records: unknown[]; source: RecordSource } {
  const records = recordListOf(input);
  const source: RecordSource =
    expected !== 'auto'
      ? expected
      : eventSourceOf(records[0]) === 'aws:kinesis'
        ? 'kinesis'
        : 'dynamodb-stream';
  const wanted = EVENT_SOURCES[source];
  const optional = source === 'dynamodb-stream';
  for (let i = 0; i < records.length; i++) {
    const got = eventSourceOf(records[i]);
    if (got === wanted || (optional && got === undefined)) continue;
    if (got === 'aws:kinesis' || got === 'aws:dynamodb' || (!optional && got === undefined))
      throw new EventSourceMismatchError(wanted, typeof got === 'string' ? got : 'none', i);
    throwIfOnFailureRecord(input);
    throw new NotAStreamEventError(
      `the batch holds ${typeof got === 'string' ? got : describe(got)} records`,
    );
  }
  return { records, source };
}

/**
 * The records of a DynamoDB stream batch, unparsed (see eventRecordsOf). Accepts a Lambda
 * DynamoDBStreamEvent, a GetRecords output, an array of records or one record.
 */
export function streamRecordsOf(input: unknown): unknown[] {
  return eventRecordsOf(input, 'dynamodb-stream').records;
}

/**
 * Every record of a batch, normalized and classified, in order. Throws NotAStreamEventError for
 * input that is not a stream batch and the first MalformedRecordError otherwise; a pipeline
 * that dead-letters per record uses streamRecordsOf + createRecordParser instead.
 */
export function parseStreamEvent<T extends Item = Item>(
  input: unknown,
  options?: ParseOptions,
): ClassifiedRecord<T>[] {
  const parse = createRecordParser(options);
  const records = eventRecordsOf(input, options?.source ?? 'dynamodb-stream').records;
  const out = new Array<ClassifiedRecord<T>>(records.length);
  for (let i = 0; i < records.length; i++) out[i] = parse<T>(records[i]);
  return out;
}
