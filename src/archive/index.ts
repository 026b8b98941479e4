// Operations on a stored archive: compaction of closed hours into duplicate-free objects,
// erasing one tenant, and restoring GLACIER / DEEP_ARCHIVE objects before they are read. Reached through `tidewater/archive` (src/archive.ts), beside readArchive.
export type { CompactArchiveOptions, CompactionReport, HourCompaction } from './compact.js';
export { compactArchive } from './compact.js';
export type { CompactionLayout, CompactionPlan, CompactionSource } from './compaction-plan.js';
export { rowSetSha256 } from './compaction-plan.js';
export type { EraseReport, EraseTenantOptions } from './erase-tenant.js';
export { eraseTenant } from './erase-tenant.js';
export {
  ArchiveRestoreRequiredError,
  CompactionFailedHoursError,
  CompactionIncompleteError,
  EraseIncompleteError,
  OpenPartitionError,
} from './errors.js';
export type { CompactionManifest } from './manifest.js';
export type { KeyAttributes } from './parquet-columns.js';
export type {
  ArchivedObject,
  ArchiveRestoreTier,
  FindArchivedObjectsOptions,
  RestoreArchiveOptions,
  RestoreArchiveReport,
} from './restore-archive.js';
export { ARCHIVE_RESTORE_TIERS, findArchivedObjects, restoreArchive } from './restore-archive.js';
export type { RecentHoursOptions, RecentHoursSummary } from './scheduled.js';
export { compactRecentHours } from './scheduled.js';
export type { JsonSchemaCarrier, TypedColumnKind, TypedColumns } from './typed-columns.js';
export { typedColumnsFromSchema } from './typed-columns.js';
