import type { ClassifiedRecord } from '../records/types.js';

/**
 * The Sink contract. A sink receives the records routed to it in one invocation as one batch,
 * in stream order, and says which of them it could not write.
 *
 * A sink MUST:
 * - be idempotent under redelivery: Lambda delivers at least once, and after a partial failure
 *   it redelivers everything from the lowest failed sequence number on, so the same records
 *   (possibly in a differently cut batch) arrive again;
 * - never drop a record silently: a record it did not durably write is either listed in
 *   `failed` or the call throws (a throw fails every record of the batch);
 * - keep stream order for records it writes in order-sensitive places.
 *
 * `flush` and `close` are optional: buffering sinks write out in `flush`, which the pipeline calls
 * before it returns its response, so nothing buffered is checkpointed unwritten.
 */
// R: any item type, an interface too (ClassifiedRecord<object>: no index signature required).
export interface Sink<R extends ClassifiedRecord<object> = ClassifiedRecord> {
  /** A stable name, used in logs, metrics and routing errors. */
  readonly name: string;
  /**
   * True for a sink that stores records' keys and images as they arrived (an archive): it is given
   * only records whose keys and images DynamoDB could have sent — valid DynamoDB JSON within
   * DynamoDB's limits, so what it stores can be read back. The pipeline checks each record routed
   * to such a sink before any sink or handler runs, and dead-letters one that fails (`malformed`,
   * the MalformedRecordError with its path) without giving it to any sink. The check walks every
   * image once; sinks that never store images leave this unset and cost nothing.
   */
  readonly checkedImages?: boolean;
  write(
    records: readonly R[],
    context: SinkContext,
  ): Promise<SinkResult | undefined> | SinkResult | undefined;
  flush?(context: SinkContext): Promise<void> | void;
  close?(): Promise<void> | void;
}

/** What a sink reports. Returning nothing (or `{}`) means every record was written. */
export interface SinkResult {
  /** Records that were not written, with the reason. Must be records from the batch given. */
  failed?: readonly SinkFailure[];
}

/** A record a sink could not write, and why. */
export interface SinkFailure {
  /** The sequence number of the record that failed. */
  sequenceNumber: string;
  error: unknown;
}

/** What a sink's write receives besides the records: the deadline signal, time left, logger. */
export interface SinkContext {
  /** Aborted when the invocation's deadline is reached; long writes should stop. */
  readonly signal?: AbortSignal;
  /** Milliseconds left before the pipeline's deadline margin, when known. */
  readonly remainingTimeMs?: () => number;
  /**
   * The invocation's logger, in pino's call shape (`warn(fields, message)`) whichever logger the
   * pipeline was given (a Powertools Logger is adapted to it). Payloads are made JSON-safe and
   * item images redacted by the pipeline's own loggers and the Powertools adapter.
   */
  readonly logger?: SinkLogger;
}

/** The logger a sink is given: pino-compatible, one object then a message. */
export interface SinkLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * Why a record was dead-lettered. `invalid-image`: an image failed the item schema of a route or
 * of the kind handlers (its issues are in the entry), or the schema itself failed on it.
 */
export type DeadLetterReason =
  | 'malformed'
  | 'retries-exhausted'
  | 'record-too-old'
  | 'unrouted'
  | 'invalid-image';

/** One problem a schema found in an image: where (`['items', 0, 'sku']`, empty for the image itself) and what. */
export interface ImageIssue {
  /** `NewImage` or `OldImage`. */
  readonly image: 'NewImage' | 'OldImage';
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/**
 * One record that the pipeline gave up on, with everything needed to replay it by hand.
 * `record` is the record exactly as it arrived (it may be malformed, so it is `unknown`).
 */
export interface DeadLetterEntry {
  readonly reason: DeadLetterReason;
  readonly record: unknown;
  readonly eventID: string | undefined;
  readonly sequenceNumber: string | undefined;
  readonly eventSourceARN: string | undefined;
  /** The last error, serialized: name, message, and the stack only if the caller asked. */
  readonly error: { name: string; message: string; stack?: string };
  /** Delivery attempts made in this process before giving up. */
  readonly attempts: number;
  /** The sink that kept failing, for `retries-exhausted`; the sinks (or `handlers`) whose schema the record failed, for `invalid-image`. */
  readonly sinkName?: string;
  /** For `invalid-image`: the schema's issues, paths and messages as the validator gave them. */
  readonly issues?: readonly ImageIssue[];
  /** ISO-8601 time the entry was made. */
  readonly at: string;
}

/**
 * Where poison records go. Sending must be durable before it resolves: the pipeline counts a
 * dead-lettered record as done, so a send that throws fails the record instead.
 *
 * The pipeline gives the entries in stream order. A send that stored some entries and not others
 * throws a DeadLetterSendError listing the ones not stored: the pipeline then fails the batch from
 * the first of those, and counts the entries before it as done. A sink should store entries in
 * order and, once one fails, not keep (or remove again) the entries after it: those records are
 * redelivered and may yet be written, and an entry left for one of them is a dead letter for a
 * record that is not dead (see docs/sinks.md, replaying dead letters). Any other error fails every
 * entry of the send.
 */
export interface DeadLetterSink {
  readonly name: string;
  send(entries: readonly DeadLetterEntry[], context: SinkContext): Promise<void>;
}
