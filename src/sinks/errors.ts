import { TidewaterError } from '../records/errors.js';

/**
 * A record could not be placed in an archive object (no table name, no creation time). It is
 * reported as a per-record failure, so the pipeline retries and finally dead-letters it.
 */
export class ArchiveKeyError extends TidewaterError {
  override name = 'ArchiveKeyError';
  readonly eventID: string;
  readonly sequenceNumber: string;
  constructor(detail: string, record: { eventID: string; sequenceNumber: string }) {
    super(
      `cannot archive record eventID=${record.eventID} sequenceNumber=${record.sequenceNumber}: ${detail}`,
    );
    this.eventID = record.eventID;
    this.sequenceNumber = record.sequenceNumber;
  }
}

/** Writing one archive object failed after the client's retries; every record in it failed. */
export class ArchiveWriteError extends TidewaterError {
  override name = 'ArchiveWriteError';
  readonly key: string;
  readonly firstSequenceNumber: string;
  readonly lastSequenceNumber: string;
  constructor(key: string, first: string, last: string, options?: { cause?: unknown }) {
    const cause = options?.cause;
    const reason = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(`writing archive object ${key} (sequenceNumber ${first}..${last}) failed: ${reason}`, options);
    this.key = key;
    this.firstSequenceNumber = first;
    this.lastSequenceNumber = last;
  }
}

/** An archive object (or one of its lines) is not what tidewater wrote: bad gzip, bad JSON, checksum mismatch. */
export class ArchiveFormatError extends TidewaterError {
  override name = 'ArchiveFormatError';
  readonly key: string;
  readonly line: number | undefined;
  constructor(key: string, detail: string, line?: number, options?: { cause?: unknown }) {
    super(`archive object ${key}${line === undefined ? '' : ` line ${line}`}: ${detail}`, options);
    this.key = key;
    this.line = line;
  }
}

/** A record cannot be restored (its stream view carries no image to write back). */
export class RestoreError extends TidewaterError {
  override name = 'RestoreError';
  readonly eventID: string | undefined;
  readonly sequenceNumber: string | undefined;
  constructor(detail: string, record: { eventID?: string | undefined; sequenceNumber?: string | undefined }) {
    super(
      `cannot restore eventID=${record.eventID ?? '?'} sequenceNumber=${record.sequenceNumber ?? '?'}: ${detail}`,
    );
    this.eventID = record.eventID;
    this.sequenceNumber = record.sequenceNumber;
  }
}

/**
 * A write of restoreItems failed (after the client's retries), so the restore stopped. The counts
 * are what was durably written or skipped before it stopped; a re-run skips what was written.
 */
export class RestoreWriteError extends TidewaterError {
  override name = 'RestoreWriteError';
  /** Identity of the (first) record whose write failed. */
  readonly eventID: string | undefined;
  readonly sequenceNumber: string | undefined;
  readonly written: number;
  readonly skipped: number;
  readonly calls: number;
  constructor(
    tableName: string,
    record: { eventID?: string | undefined; sequenceNumber?: string | undefined },
    progress: { written: number; skipped: number; calls: number },
    options?: { cause?: unknown },
  ) {
    const cause = options?.cause;
    const reason = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(
      `restoring into ${tableName} failed at eventID=${record.eventID ?? '?'} sequenceNumber=${record.sequenceNumber ?? '?'} ` +
        `(written ${progress.written}, skipped ${progress.skipped}): ${reason}`,
      options,
    );
    this.eventID = record.eventID;
    this.sequenceNumber = record.sequenceNumber;
    this.written = progress.written;
    this.skipped = progress.skipped;
    this.calls = progress.calls;
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
