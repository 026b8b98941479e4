import { TidewaterError } from '../core/errors.js';

// The base classes live in the kernel; re-exported while importers move to src/core.
export { InvalidOptionsError, TidewaterError } from '../core/errors.js';

/** Why a single record could not be parsed. Stable strings: dead-letter entries and metrics use them. */
export type MalformedRecordReason =
  | 'not-an-object'
  | 'missing-event-id'
  | 'unknown-event-name'
  | 'missing-dynamodb'
  | 'missing-keys'
  | 'missing-sequence-number'
  | 'invalid-field'
  | 'invalid-attribute-value'
  | 'invalid-number';

/**
 * One record of a batch is not a valid stream record. The pipeline dead-letters it (the rest of
 * the batch goes on); eventID and sequenceNumber identify it when the record carried them.
 */
export class MalformedRecordError extends TidewaterError {
  override name = 'MalformedRecordError';
  readonly eventID: string | undefined;
  readonly sequenceNumber: string | undefined;
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
      `malformed stream record (${reason}) eventID=${identity.eventID ?? '?'} ` +
        `sequenceNumber=${identity.sequenceNumber ?? '?'}${identity.path ? ` at ${identity.path}` : ''}: ${detail}`,
      options,
    );
    this.reason = reason;
    this.eventID = identity.eventID;
    this.sequenceNumber = identity.sequenceNumber;
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

export type InvalidAttributeValueReason =
  | 'no-type'
  | 'multiple-types'
  | 'unknown-type'
  | 'invalid-number'
  | 'invalid-binary'
  | 'wrong-shape';

/**
 * An AttributeValue that DynamoDB could never have produced (zero or two type keys, an unknown
 * type, an `N` that is not a number). `path` locates it from the map root (`a.b[2]`).
 */
export class InvalidAttributeValueError extends TidewaterError {
  override name = 'InvalidAttributeValueError';
  readonly reason: InvalidAttributeValueReason;
  readonly detail: string;
  /** Path segments from the map root, outermost first. Filled in while the error unwinds. */
  readonly segments: (string | number)[] = [];

  constructor(reason: InvalidAttributeValueReason, detail: string) {
    super(detail);
    this.reason = reason;
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

/** A JavaScript value that has no DynamoDB representation (an empty Set, NaN, a Date, a function...). */
export class UnsupportedValueError extends TidewaterError {
  override name = 'UnsupportedValueError';
  readonly detail: string;
  /** Path segments from the item root, outermost first. Filled in while the error unwinds. */
  readonly segments: (string | number)[] = [];

  constructor(detail: string) {
    super(detail);
    this.detail = detail;
  }

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

function formatPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : out === '' ? s : `.${s}`;
  return out;
}
