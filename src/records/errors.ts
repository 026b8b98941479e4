import { RecordError, recordLabel, TidewaterError } from '../core/errors.js';

/** Why a single record could not be parsed. Stable strings: dead-letter entries and metrics use them. */
export type MalformedRecordReason =
  | 'not-an-object'
  | 'missing-event-id'
  | 'unknown-event-name'
  | 'missing-dynamodb'
  | 'missing-keys'
  | 'missing-sequence-number'
  | 'invalid-sequence-number'
  | 'invalid-creation-time'
  | 'invalid-field'
  | 'invalid-attribute-value'
  | 'invalid-number'
  /** A Kinesis record whose data is not base64, not JSON or not a DynamoDB change record. */
  | 'invalid-kinesis-data'
  /** A Kinesis record whose change data names a table the handler was not told its stream carries. */
  | 'foreign-table';

/**
 * One record of a batch is not a valid stream record. The pipeline dead-letters it (the rest of
 * the batch goes on); eventID and sequenceNumber identify it when the record carried them.
 */
export class MalformedRecordError extends RecordError {
  override name = 'MalformedRecordError';
  readonly reason: MalformedRecordReason;
  /** Where in the record the problem is, e.g. `dynamodb.NewImage.price` (when known). */
  readonly path: string | undefined;

  constructor(
    reason: MalformedRecordReason,
    detail: string,
    identity: {
      eventID?: string | undefined;
      sequenceNumber?: string | undefined;
      path?: string | undefined;
    },
    options?: { cause?: unknown },
  ) {
    super(
      `malformed stream record (${reason}) ${recordLabel(identity)}${identity.path ? ` at ${identity.path}` : ''}: ${detail}`,
      identity,
      options,
    );
    this.reason = reason;
    this.path = identity.path;
  }
}

/**
 * The input is not a DynamoDB stream event at all (wrong trigger, a test payload, a batch from
 * another event source). Nothing in it can be dead-lettered record by record, so the invocation
 * fails and Lambda retries or sends it to the on-failure destination.
 */
export class NotAStreamEventError extends TidewaterError {
  override name = 'NotAStreamEventError';
  constructor(detail: string) {
    super(`not a DynamoDB stream event: ${detail}`);
  }
}

/**
 * The batch comes from the other source than the one configured: a Kinesis batch given to a
 * handler for DynamoDB Streams, or the reverse, or a batch mixing both. A wiring mistake, not a
 * bad record: the invocation fails whole.
 */
export class EventSourceMismatchError extends NotAStreamEventError {
  override name = 'EventSourceMismatchError';
  /** What the handler is configured for. */
  readonly expected: string;
  /** The eventSource of the record that did not fit. */
  readonly got: string;

  constructor(expected: string, got: string, index: number) {
    super('');
    this.message = `the handler expects ${expected} records, but record ${index} of the batch has eventSource ${got} (set the source option to match the trigger)`;
    this.expected = expected;
    this.got = got;
  }
}

/** Why InvalidAttributeValueError refused an attribute value. */
export type InvalidAttributeValueReason =
  | 'no-type'
  | 'multiple-types'
  | 'unknown-type'
  | 'invalid-number'
  | 'invalid-binary'
  | 'wrong-shape'
  | 'number-out-of-range'
  | 'empty-set'
  | 'duplicate-set-member'
  | 'too-deep';

/** A value somewhere inside an item or attribute map; the converters add its path while unwinding. */
export abstract class ValuePathError extends TidewaterError {
  readonly detail: string;
  /** Path segments from the root, outermost first. Filled in while the error unwinds. */
  readonly segments: (string | number)[] = [];

  constructor(detail: string) {
    super(detail);
    this.detail = detail;
  }

  /** `price`, `tags[2]`, `a.b`; empty when the value itself was passed. */
  get path(): string {
    return formatPath(this.segments);
  }

  /** Called once the error has left the value tree, so the message names the full path. */
  withPath(): this {
    const path = this.path;
    if (path !== '') this.message = `${this.detail} (at ${path})`;
    return this;
  }
}

/**
 * An AttributeValue that DynamoDB could never have produced (zero or two type keys, an unknown
 * type, an `N` that is not a number or outside DynamoDB's range and precision, an empty set, a
 * set with a member twice, nesting below level 32). `path` locates it from the map root (`a.b[2]`).
 */
export class InvalidAttributeValueError extends ValuePathError {
  override name = 'InvalidAttributeValueError';
  readonly reason: InvalidAttributeValueReason;

  constructor(reason: InvalidAttributeValueReason, detail: string) {
    super(detail);
    this.reason = reason;
  }
}

/** A JavaScript value that has no DynamoDB representation (an empty Set, NaN, a Date, a function...). */
export class UnsupportedValueError extends ValuePathError {
  override name = 'UnsupportedValueError';
}

function formatPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : out === '' ? s : `.${s}`;
  return out;
}
