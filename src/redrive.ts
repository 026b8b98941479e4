// `tidewater/redrive`: running failed stream batches again — Lambda's on-failure records (SQS,
// SNS via SQS, S3) read back from the stream, and tidewater's own dead-letter entries — through
// a local handler or the deployed function (loads the Streams, SQS, S3 and Lambda clients).

export type { StreamBatchInfo, StreamInvocationRecord } from './records/index.js';
export { OnFailureRecordError } from './records/index.js';
export * from './redrive/index.js';
