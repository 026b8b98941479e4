/**
 * Every error tidewater throws on purpose extends TidewaterError, so callers can tell "bad input
 * we understood" from a bug. `name` is stable (set on the prototype chain by each class), so it
 * survives serialization into dead-letter entries and logs.
 */
export class TidewaterError extends Error {
  override name = 'TidewaterError';
}

/** What identifies a record in an error: Lambda's eventID and the stream's sequence number. */
export interface RecordIdentity {
  readonly eventID?: string | undefined;
  readonly sequenceNumber?: string | undefined;
}

/** `eventID=… sequenceNumber=…`, as every message names a record (`?` for what it lacks). */
export function recordLabel(record: RecordIdentity): string {
  return `eventID=${record.eventID ?? '?'} sequenceNumber=${record.sequenceNumber ?? '?'}`;
}

/**
 * An error about one record: its eventID and sequence number travel with it into dead-letter
 * entries and logs, so the record can be found in the stream or the archive.
 */
export class RecordError extends TidewaterError {
  override name = 'RecordError';
  readonly eventID: string | undefined;
  readonly sequenceNumber: string | undefined;
  constructor(message: string, record: RecordIdentity, options?: { cause?: unknown }) {
    super(message, options);
    this.eventID = record.eventID;
    this.sequenceNumber = record.sequenceNumber;
  }
}

/** A cause as messages quote it: `Name: message` for an Error, its text otherwise. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * An options object with an unknown key or a bad value: a typo must fail loudly, not be ignored.
 * `option` names the offending key (`sse.kmsKeyId` for a nested one) when one key is at fault.
 */
export class InvalidOptionsError extends TidewaterError {
  override name = 'InvalidOptionsError';
  readonly option: string | undefined;
  constructor(message: string, options?: { option?: string | undefined; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.option = options?.option;
  }
}

/**
 * A call came back with part of its work undone (a BatchWriteItem's UnprocessedItems, a
 * SendMessageBatch's failed entries): what is left is safe to send again, so the retry
 * policies treat it like throttling. `remaining` counts what is left.
 */
export class PartialFailureError extends TidewaterError {
  override name = 'PartialFailureError';
  constructor(
    readonly remaining: number,
    detail = `${remaining} item(s) left unprocessed`,
  ) {
    super(detail);
  }
}
