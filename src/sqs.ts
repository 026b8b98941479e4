/**
 * The `tidewater/sqs` entry point.
 * @module tidewater/sqs
 */
// `tidewater/sqs`: the SQS dead-letter sink (its overflow for oversize entries is the S3 one).

// SinkRetryStrategy, the clients' default retry strategy, is exported from `tidewater/s3`.
export type { SqsDeadLetterSinkOptions } from './sinks/sqs-dead-letter-sink.js';
export { SqsDeadLetterSink } from './sinks/sqs-dead-letter-sink.js';
