import { RecordError, recordLabel, TidewaterError } from '../core/errors.js';
import type { ImageIssue } from '../sinks/types.js';

/**
 * A record of the batch has no readable sequence number. Lambda only accepts sequence numbers of
 * the batch as `itemIdentifier`, so no partial response can name this record: the invocation
 * fails as a whole and Lambda retries the batch (bisecting it when BisectBatchOnFunctionError is on).
 */
export class UnreadableSequenceNumberError extends TidewaterError {
  override name = 'UnreadableSequenceNumberError';
  readonly index: number;
  readonly eventID: string | undefined;
  readonly sequenceNumber: undefined = undefined;
  constructor(index: number, eventID: string | undefined) {
    super(
      `record #${index} of the batch (eventID=${eventID ?? '?'}) has no readable dynamodb.SequenceNumber; ` +
        'failing the whole batch because a partial response could not name it',
    );
    this.index = index;
    this.eventID = eventID;
  }
}

/** No route and no handler took the record and `onUnrouted` asks for it to fail or be dead-lettered. */
export class UnroutedRecordError extends RecordError {
  override name = 'UnroutedRecordError';
  declare readonly eventID: string;
  declare readonly sequenceNumber: string;
  constructor(record: { eventID: string; sequenceNumber: string; kind: string }) {
    super(`no route matched ${record.kind} record ${recordLabel(record)}`, record);
  }
}

/** A sink reported a failure for a sequence number it was not given: its whole batch is failed. */
export class SinkContractError extends TidewaterError {
  override name = 'SinkContractError';
  readonly sinkName: string;
  readonly sequenceNumber: string;
  constructor(sinkName: string, sequenceNumber: unknown) {
    super(
      `sink ${sinkName} reported a failure for sequenceNumber ${JSON.stringify(sequenceNumber)}, ` +
        'which is not in the batch it was given; treating its whole batch as failed',
    );
    this.sinkName = sinkName;
    this.sequenceNumber = String(sequenceNumber);
  }
}

/** The invocation's deadline margin was reached: work not started is reported as failed so Lambda resumes there. */
export class DeadlineReachedError extends TidewaterError {
  override name = 'DeadlineReachedError';
  readonly sequenceNumber: string | undefined;
  constructor(sequenceNumber: string | undefined, marginMs: number) {
    super(
      `less than ${marginMs} ms of the invocation left; stopping before sequenceNumber ${sequenceNumber ?? '?'} ` +
        'so the batch is checkpointed instead of timing out',
    );
    this.sequenceNumber = sequenceNumber;
  }
}

/** Which image of a record a schema checked. */
export type ImageName = 'NewImage' | 'OldImage';

/**
 * An image did not match the item schema of the route (or kind handlers) it was routed to: the
 * record is dead-lettered (`invalid-image`) with the schema's issues, never retried (the same
 * image fails the same way) and never given to the sinks or handler behind that schema.
 *
 * The message names where the image failed, not what the validator said: some validators quote
 * the offending value in their messages (valibot: `… but received "12"`) and images are never
 * logged unless asked. `issues` (messages included) is a getter, not an own field, for the same
 * reason — loggers write an error's own fields — and travels in the dead-letter entry instead.
 */
export class InvalidImageError extends RecordError {
  override name = 'InvalidImageError';
  declare readonly eventID: string;
  declare readonly sequenceNumber: string;
  readonly image: ImageName;
  /** The schema library (`~standard.vendor`): zod, valibot, arktype… */
  readonly vendor: string;
  readonly #issues: readonly ImageIssue[];
  constructor(
    record: { eventID: string; sequenceNumber: string },
    image: ImageName,
    vendor: string,
    issues: readonly ImageIssue[],
  ) {
    const paths = [...new Set(issues.map((i) => issuePath(i.path)))];
    const shown = paths.slice(0, 5).join(', ') + (paths.length > 5 ? `, … (${paths.length - 5} more)` : '');
    super(
      `${image} of ${recordLabel(record)} does not match its item schema (${vendor}): ` +
        `${issues.length} issue(s), at ${shown}`,
      record,
    );
    this.image = image;
    this.vendor = vendor;
    this.#issues = issues;
  }

  /** The validator's issues: path and message of each. */
  get issues(): readonly ImageIssue[] {
    return this.#issues;
  }
}

/** How an item schema itself failed on an image, as opposed to finding it invalid. */
export type ImageSchemaProblem = 'threw' | 'bad-result' | 'deadline';

/**
 * The item schema failed on an image instead of judging it: `validate` threw (`cause`), returned
 * something that is not a Standard Schema result (or an output that is not an object), or had not
 * settled when the invocation's deadline margin was reached. The record is dead-lettered
 * (`invalid-image`) like an invalid one: nothing is lost, and a schema that fails on a record
 * would fail on it again.
 */
export class ImageSchemaError extends RecordError {
  override name = 'ImageSchemaError';
  declare readonly eventID: string;
  declare readonly sequenceNumber: string;
  readonly image: ImageName;
  readonly vendor: string;
  readonly problem: ImageSchemaProblem;
  constructor(
    record: { eventID: string; sequenceNumber: string },
    image: ImageName,
    vendor: string,
    problem: ImageSchemaProblem,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `the item schema (${vendor}) failed on ${image} of ${recordLabel(record)}: ${detail}`,
      record,
      options,
    );
    this.image = image;
    this.vendor = vendor;
    this.problem = problem;
  }
}

/** `items[0].sku`; `(image)` for an issue about the whole image. */
export function issuePath(path: readonly (string | number)[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) text += text === '' ? key : `.${key}`;
    else text += `[${JSON.stringify(key)}]`;
  }
  return text === '' ? '(image)' : text;
}
