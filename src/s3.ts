/**
 * The `tidewater/s3` entry point.
 * @module tidewater/s3
 */
// `tidewater/s3`: the sinks that write to S3. Loads @aws-sdk/client-s3, nothing else from the SDK.

export type { ArchiveStorageClass } from './archive/format.js';
export { ARCHIVE_STORAGE_CLASSES } from './archive/format.js';
export type { SdkRetryStrategy, SinkRetryErrorInfo, SinkRetryToken } from './sinks/retry-strategy.js';
export { SinkRetryStrategy } from './sinks/retry-strategy.js';
export type { S3ArchiveSinkOptions, ServerSideEncryption } from './sinks/s3-archive-sink.js';
export { S3ArchiveSink } from './sinks/s3-archive-sink.js';
export type { S3DeadLetterSinkOptions } from './sinks/s3-dead-letter-sink.js';
export { S3DeadLetterSink } from './sinks/s3-dead-letter-sink.js';
