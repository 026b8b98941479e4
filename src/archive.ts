// `tidewater/archive`: reading an archive back, restoring items, and maintaining the stored
// archive (compaction, erasing a tenant), for scripts, jobs and the scheduled compaction rather
// than stream handlers (loads the S3 and DynamoDB clients).

export { ArchiveBucketNotFoundError, UnpartitionedObjectsError } from './archive/errors.js';
export type { ArchiveRow } from './archive/format.js';
export { decodeObject as decodeArchiveObject } from './archive/format.js';
export * from './archive/index.js';
export type { CorruptArchiveObject, ReadArchiveOptions } from './archive/read-archive.js';
export { readArchive, readArchiveRows } from './archive/read-archive.js';
export type { RestoreItemsOptions, RestoreResult, RestoreTtl } from './archive/restore-items.js';
export { restoreItems } from './archive/restore-items.js';
export type { ArchiveRangeOptions } from './archive/store.js';
