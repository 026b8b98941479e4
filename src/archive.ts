/**
 * The `tidewater/archive` entry point.
 * @module tidewater/archive
 */
// `tidewater/archive`: reading an archive back, restoring items, and maintaining the stored
// archive (compaction, erasing a tenant), for scripts, jobs and the scheduled compaction rather
// than stream handlers (loads the S3 and DynamoDB clients).

export { ArchiveBucketNotFoundError, UnpartitionedObjectsError } from './archive/errors.js';
export type { ArchiveObjectFormat, ArchiveRow } from './archive/format.js';
export { decodeObject as decodeArchiveObject } from './archive/format.js';
export * from './archive/index.js';
export { decodeArchiveBody } from './archive/object-decoder.js';
export type { CorruptArchiveObject, ReadArchiveOptions } from './archive/read-archive.js';
export { readArchive, readArchiveRows } from './archive/read-archive.js';
export type { RestoreItemsOptions, RestoreResult, RestoreTtl } from './archive/restore-items.js';
export { restoreItems } from './archive/restore-items.js';
export type { ArchiveRangeOptions } from './archive/store.js';

// Moved to the package root in 0.1.0 (a handler partitions with them and must not load the S3
// client): kept as values that throw naming the root, so old imports fail with the fix in hand.
import { movedExport } from './core/moved-export.js';

/**
 * Moved to the package root in 0.1.0.
 * @deprecated `import { tenantFromPartitionKey } from 'tidewater'`; this name goes in 0.3.0.
 */
export const tenantFromPartitionKey = /* @__PURE__ */ movedExport(
  'tenantFromPartitionKey',
  'tidewater/archive',
  "import { tenantFromPartitionKey } from 'tidewater'",
);
/**
 * Moved to the package root in 0.1.0.
 * @deprecated `import { InvalidTenantError } from 'tidewater'`; this name goes in 0.3.0.
 */
export const InvalidTenantError = /* @__PURE__ */ movedExport(
  'InvalidTenantError',
  'tidewater/archive',
  "import { InvalidTenantError } from 'tidewater'",
);
