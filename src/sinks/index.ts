// The sinks every handler may use without an AWS client. Sinks that talk to AWS have their own
// entry points (src/s3.ts, src/sqs.ts, src/archive.ts), so a handler loads only the client it uses.

export {
  ArchiveFormatError,
  ArchiveKeyError,
  InvalidTenantError,
  RestoreError,
  RestoreWriteError,
} from '../archive/errors.js';
export type { TenantFromPartitionKeyOptions, TenantPartitioner } from '../archive/partition.js';
export { tenantFromPartitionKey } from '../archive/partition.js';
export { ArchiveWriteError, DeadLetterSendError } from './errors.js';
export type { FileSinkOptions } from './file-sink.js';
export { FileSink } from './file-sink.js';
export type { MemoryDeadLetterSinkOptions } from './memory-dead-letter-sink.js';
export { MemoryDeadLetterSink } from './memory-dead-letter-sink.js';
export type { MemorySinkOptions } from './memory-sink.js';
export { MemorySink } from './memory-sink.js';
export { MemoryVersionStore } from './memory-version-store.js';
export type { RecordVersion } from './record-version.js';
export { recordVersion, UnversionedRecordError } from './record-version.js';
export type {
  DeadLetterEntry,
  DeadLetterReason,
  DeadLetterSink,
  ImageIssue,
  Sink,
  SinkContext,
  SinkFailure,
  SinkLogger,
  SinkResult,
} from './types.js';
export type { VersionGuardOptions } from './version-guard.js';
export { VersionConflictError, versionGuard } from './version-guard.js';
export type { VersionStore } from './version-store.js';
