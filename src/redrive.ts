/**
 * The `tidewater/redrive` entry point.
 * @module tidewater/redrive
 */
// `tidewater/redrive`: running failed stream batches again — Lambda's on-failure records (SQS,
// SNS via SQS, S3) read back from the stream, and tidewater's own dead-letter entries — through
// a local handler or the deployed function (loads the Streams, SQS, S3 and Lambda clients).

// The on-failure record's types and OnFailureRecordError are on the package root (records).
export * from './redrive/index.js';
