// `tidewater/s3`: the sinks that write to S3. Loads @aws-sdk/client-s3, nothing else from the SDK.

export type { SdkRetryStrategy, SinkRetryErrorInfo, SinkRetryToken } from './sinks/retry-strategy.js';
export { SinkRetryStrategy } from './sinks/retry-strategy.js';
export type {
  ArchiveStorageClass,
  S3ArchiveSinkOptions,
  ServerSideEncryption,
} from './sinks/s3-archive-sink.js';
export { ARCHIVE_STORAGE_CLASSES, S3ArchiveSink } from './sinks/s3-archive-sink.js';
export type { S3DeadLetterSinkOptions } from './sinks/s3-dead-letter-sink.js';
export { S3DeadLetterSink } from './sinks/s3-dead-letter-sink.js';
