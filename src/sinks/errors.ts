import { describeError, TidewaterError } from '../core/errors.js';

/** Writing one archive object failed after the client's retries; every record in it failed. */
export class ArchiveWriteError extends TidewaterError {
  override name = 'ArchiveWriteError';
  readonly key: string;
  readonly firstSequenceNumber: string;
  readonly lastSequenceNumber: string;
  constructor(key: string, first: string, last: string, options?: { cause?: unknown }) {
    super(
      `writing archive object ${key} (sequenceNumber ${first}..${last}) failed: ${describeError(options?.cause)}`,
      options,
    );
    this.key = key;
    this.firstSequenceNumber = first;
    this.lastSequenceNumber = last;
  }
}

/** A dead-letter send did not complete; the listed entries are not durably stored. */
export class DeadLetterSendError extends TidewaterError {
  override name = 'DeadLetterSendError';
  /** The sequence numbers (or eventIDs when there is no sequence number) of the entries not stored. */
  readonly sequenceNumbers: readonly string[];
  constructor(detail: string, sequenceNumbers: readonly string[], options?: { cause?: unknown }) {
    super(
      `dead-letter send failed for ${sequenceNumbers.join(', ') || 'entries without identity'}: ${detail}`,
      options,
    );
    this.sequenceNumbers = sequenceNumbers;
  }
}

/** The failure rule of a MemorySink / MemoryDeadLetterSink chose to fail this record. */
export class InjectedSinkFailure extends TidewaterError {
  override name = 'InjectedSinkFailure';
  readonly sequenceNumber: string | undefined;
  constructor(sequenceNumber: string | undefined, detail = 'failure injected by the test rule') {
    super(`sequenceNumber=${sequenceNumber ?? '?'}: ${detail}`);
    this.sequenceNumber = sequenceNumber;
  }
}
