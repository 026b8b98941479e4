// `tidewater/archive`: reading an archive back and restoring items, for scripts and jobs rather
// than stream handlers (loads the S3 and DynamoDB clients).
export type { ArchiveRow } from './sinks/archive-format.js';
export { ARCHIVE_FORMAT, decodeObject as decodeArchiveObject } from './sinks/archive-format.js';
export type { ReadArchiveOptions } from './sinks/read-archive.js';
export { readArchive, readArchiveRows } from './sinks/read-archive.js';
export type { RestoreItemsOptions, RestoreResult, RestoreTtl } from './sinks/restore-items.js';
export { restoreItems } from './sinks/restore-items.js';
