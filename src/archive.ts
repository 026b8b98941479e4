// `tidewater/archive`: reading an archive back, restoring items, and maintaining the stored
// archive (compaction, erasing a tenant), for scripts, jobs and the scheduled compaction rather
// than stream handlers (loads the S3 and DynamoDB clients).
export * from './archive/index.js';
export { ArchiveBucketNotFoundError, UnpartitionedObjectsError } from './sinks/archive-errors.js';
export type { ArchiveRow } from './sinks/archive-format.js';
export { ARCHIVE_FORMAT, decodeObject as decodeArchiveObject } from './sinks/archive-format.js';
export type { ArchiveRangeOptions } from './sinks/archive-store.js';
export type { CorruptArchiveObject, ReadArchiveOptions } from './sinks/read-archive.js';
export { readArchive, readArchiveRows } from './sinks/read-archive.js';
export type { RestoreItemsOptions, RestoreResult, RestoreTtl } from './sinks/restore-items.js';
export { restoreItems } from './sinks/restore-items.js';
