// `tidewater/sqs`: the SQS dead-letter sink (its overflow for oversize entries is the S3 one).

export type { SdkRetryStrategy, SinkRetryErrorInfo, SinkRetryToken } from './sinks/retry-strategy.js';
export { SinkRetryStrategy } from './sinks/retry-strategy.js';
export type { SqsDeadLetterSinkOptions } from './sinks/sqs-dead-letter-sink.js';
export { SqsDeadLetterSink } from './sinks/sqs-dead-letter-sink.js';
