export type { ArchiveRow } from './archive-format.js';
export { ARCHIVE_FORMAT, decodeObject as decodeArchiveObject } from './archive-format.js';
export {
  DEAD_LETTER_POINTER_TYPE,
  DEAD_LETTER_TYPE,
  serializeDeadLetterEntry,
} from './dead-letter-message.js';
export {
  ArchiveFormatError,
  ArchiveKeyError,
  ArchiveWriteError,
  DeadLetterSendError,
  InjectedSinkFailure,
  RestoreError,
  RestoreWriteError,
} from './errors.js';
export type { FileSinkOptions } from './file-sink.js';
export { FileSink } from './file-sink.js';
export type { MemoryDeadLetterSinkOptions } from './memory-dead-letter-sink.js';
export { MemoryDeadLetterSink } from './memory-dead-letter-sink.js';
export type { MemorySinkOptions } from './memory-sink.js';
export { MemorySink } from './memory-sink.js';
export type { ReadArchiveOptions } from './read-archive.js';
export { readArchive, readArchiveRows } from './read-archive.js';
export type { RestoreItemsOptions, RestoreResult, RestoreTtl } from './restore-items.js';
export { restoreItems } from './restore-items.js';
export type { ArchiveStorageClass, S3ArchiveSinkOptions, ServerSideEncryption } from './s3-archive-sink.js';
export { ARCHIVE_STORAGE_CLASSES, S3ArchiveSink } from './s3-archive-sink.js';
export type { S3DeadLetterSinkOptions } from './s3-dead-letter-sink.js';
export { S3DeadLetterSink } from './s3-dead-letter-sink.js';
export type { SqsDeadLetterSinkOptions } from './sqs-dead-letter-sink.js';
export { SqsDeadLetterSink } from './sqs-dead-letter-sink.js';
export type {
  DeadLetterEntry,
  DeadLetterReason,
  DeadLetterSink,
  Sink,
  SinkContext,
  SinkFailure,
  SinkLogger,
  SinkResult,
} from './types.js';
