import { TidewaterError } from '../core/errors.js';

/** Where in an export a problem is: the S3 object key and, when one is at fault, the line (from 1). */
export interface ExportPosition {
  readonly key: string;
  readonly line?: number | undefined;
}

function at(position: ExportPosition): string {
  return position.line === undefined ? position.key : `${position.key} line ${position.line}`;
}

/** Every error a backfill throws on purpose: the export object (and line) it is about, when one is. */
export class BackfillError extends TidewaterError {
  override name = 'BackfillError';
}

/** The export is not in DYNAMODB_JSON (an ION export, or a format this reader does not know). */
export class UnsupportedExportFormatError extends BackfillError {
  override name = 'UnsupportedExportFormatError';
  constructor(
    readonly key: string,
    readonly format: string,
  ) {
    super(`${key}: export format ${format} is not supported; export the table in DYNAMODB_JSON`);
  }
}

/** A manifest that is not what DynamoDB writes (missing fields, not JSON). */
export class InvalidExportManifestError extends BackfillError {
  override name = 'InvalidExportManifestError';
  constructor(
    readonly position: ExportPosition,
    detail: string,
  ) {
    super(`${at(position)}: ${detail}`);
  }
}

/** The manifest names a data file the bucket does not hold (deleted, or another prefix). */
export class MissingExportFileError extends BackfillError {
  override name = 'MissingExportFileError';
  constructor(
    readonly key: string,
    readonly manifestKey: string | undefined,
  ) {
    super(
      `${key}: no such object${manifestKey === undefined ? '' : ` (named by ${manifestKey})`}; was the export moved or partly deleted?`,
    );
  }
}

/** A data file whose gzip stream is cut short or is not gzip: `line` is the first line not read whole. */
export class CorruptExportFileError extends BackfillError {
  override name = 'CorruptExportFileError';
  constructor(
    readonly key: string,
    readonly line: number,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${key} line ${line}: ${detail}`, options);
  }
}

/** A data file line that is not one JSON object. Its content is never quoted (it holds an item). */
export class InvalidExportLineError extends BackfillError {
  override name = 'InvalidExportLineError';
  constructor(
    readonly key: string,
    readonly line: number,
    detail: string,
  ) {
    super(`${key} line ${line}: ${detail}`);
  }
}

/** The checkpoint file was written by a backfill of another export or table: resuming from it would skip the wrong items. */
export class CheckpointMismatchError extends BackfillError {
  override name = 'CheckpointMismatchError';
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}; use another --checkpoint file, or delete this one to start over`);
  }
}

/** The checkpoint file is not one a backfill wrote (not JSON, or not its shape). */
export class InvalidCheckpointError extends BackfillError {
  override name = 'InvalidCheckpointError';
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
  }
}

/** The table's key attributes could not be found (no key schema given, and DescribeTable told none). */
export class KeySchemaUnknownError extends BackfillError {
  override name = 'KeySchemaUnknownError';
}

/**
 * A data file that is not the one its manifest line describes: its MD5 (`md5Checksum`) or its
 * number of items (`itemCount`) differs. The file is not marked done.
 */
export class ExportFileMismatchError extends BackfillError {
  override name = 'ExportFileMismatchError';
  constructor(
    readonly key: string,
    readonly field: 'md5Checksum' | 'itemCount',
    detail: string,
    readonly manifestKey?: string,
  ) {
    super(
      `${key}: ${detail}, not what ${manifestKey ?? 'its manifest'} says (${field}); the export is damaged or was altered`,
    );
  }
}

/** A data file line longer than any item DynamoDB stores can make it: `line` is the line, from 1. */
export class ExportLineTooLongError extends BackfillError {
  override name = 'ExportLineTooLongError';
  constructor(
    readonly key: string,
    readonly line: number,
    readonly maxChars: number,
  ) {
    super(
      `${key} line ${line}: longer than ${maxChars} characters, more than a 400 KB item's DynamoDB JSON can be`,
    );
  }
}

/** A data file that inflates more than any export's gzip does (a decompression bomb): reading stopped. */
export class ExportFileInflationError extends BackfillError {
  override name = 'ExportFileInflationError';
  constructor(
    readonly key: string,
    readonly line: number,
    readonly maxRatio: number,
  ) {
    super(
      `${key} line ${line}: inflates more than ${maxRatio} times its compressed size; ` +
        'no DynamoDB export does (raise maxInflateRatio if this export is genuine)',
    );
  }
}

/** A checkpoint says more lines of a data file are done than the file has: it is not this file's checkpoint. */
export class CheckpointPastEndError extends BackfillError {
  override name = 'CheckpointPastEndError';
  constructor(
    readonly key: string,
    readonly line: number,
    readonly lines: number,
  ) {
    super(
      `${key}: the checkpoint says line ${line} is done, but the file has ${lines} lines; delete the checkpoint to start over`,
    );
  }
}
