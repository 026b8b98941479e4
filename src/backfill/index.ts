// Backfill: a function's routes, handlers and sinks run over a table's existing items — from a
// DynamoDB export to S3 (full or incremental) or a parallel Scan — as records whose `origin` says
// so. Reached through `tidewater/backfill` (src/backfill.ts).
export type { IncrementalView } from './backfill-record.js';
export type { BackfillCheckpoint, FileCheckpoint, SegmentCheckpoint } from './checkpoint.js';
export {
  BackfillError,
  CheckpointMismatchError,
  CheckpointPastEndError,
  CorruptExportFileError,
  ExportFileInflationError,
  ExportFileMismatchError,
  ExportLineTooLongError,
  InvalidCheckpointError,
  InvalidExportLineError,
  InvalidExportManifestError,
  KeySchemaUnknownError,
  MissingExportFileError,
  UnsupportedExportFormatError,
} from './errors.js';
export type {
  BackfillExportFileOptions,
  ExportFile,
  ExportFileProgress,
  ExportFileReport,
} from './export-file.js';
export { backfillExportFile } from './export-file.js';
export type { ExportDataFile, ExportManifest, ExportSummary, ExportType } from './manifest.js';
export { readExportManifest } from './manifest.js';
export type { DeliveryOptions, ExportReadOptions } from './options.js';
export type { BackfillProgress, BackfillReport, BackfillSource, RunBackfillOptions } from './run-backfill.js';
export { runBackfill } from './run-backfill.js';
