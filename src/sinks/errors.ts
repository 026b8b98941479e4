import {
  describeError,
  RecordError,
  type RecordIdentity,
  recordLabel,
  TidewaterError,
} from '../core/errors.js';

/**
 * A record could not be placed in an archive object (no table name, a tenant it cannot be filed
 * under). It is reported as a per-record failure, so the pipeline retries and finally
 * dead-letters it. A record without a creation time is malformed instead (MalformedRecordError:
 * dead-lettered at once).
 */
export class ArchiveKeyError extends RecordError {
  override name = 'ArchiveKeyError';
  declare readonly eventID: string;
  declare readonly sequenceNumber: string;
  constructor(detail: string, record: { eventID: string; sequenceNumber: string }) {
    super(`cannot archive record ${recordLabel(record)}: ${detail}`, record);
  }
}

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
export class RestoreError extends RecordError {
  override name = 'RestoreError';
  constructor(detail: string, record: RecordIdentity) {
    super(`cannot restore ${recordLabel(record)}: ${detail}`, record);
  }
}

/**
 * A write of restoreItems failed (after the client's retries), so the restore stopped. The counts
 * are what was durably written or skipped before it stopped; a re-run skips what was written.
 */
export class RestoreWriteError extends RecordError {
  override name = 'RestoreWriteError';
  readonly written: number;
  readonly skipped: number;
  readonly calls: number;
  /** `record` identifies the (first) record whose write failed. */
  constructor(
    tableName: string,
    record: RecordIdentity,
    progress: { written: number; skipped: number; calls: number },
    options?: { cause?: unknown },
  ) {
    super(
      `restoring into ${tableName} failed at ${recordLabel(record)} ` +
        `(written ${progress.written}, skipped ${progress.skipped}): ${describeError(options?.cause)}`,
      record,
      options,
    );
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
