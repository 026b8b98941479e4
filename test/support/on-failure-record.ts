import type { StreamInvocationRecord } from '../../src/records/index.js';

/** The example invocation record of the Lambda developer guide ("Error handling for DynamoDB event sources"), values changed. */
export const DOCUMENTED: StreamInvocationRecord = {
  requestContext: {
    requestId: '0b0c3f4e-1111-4222-8333-444455556666',
    functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:orders',
    condition: 'RetryAttemptsExhausted',
    approximateInvokeCount: 1,
  },
  responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
  version: '1.0',
  timestamp: '2026-01-02T03:04:05.678Z',
  DDBStreamBatchInfo: {
    shardId: 'shardId-00000001700000000000-abcdef12',
    startSequenceNumber: '700000000001111111111',
    endSequenceNumber: '700000000001111111113',
    approximateArrivalOfFirstRecord: '2026-01-02T03:04:00Z',
    approximateArrivalOfLastRecord: '2026-01-02T03:04:01Z',
    batchSize: 3,
    streamArn: 'arn:aws:dynamodb:eu-west-1:123456789012:table/orders/stream/2026-01-01T00:00:00.000',
  },
};

/**
 * The same for a Kinesis data stream a table's changes are streamed to (the guide's "Retaining
 * discarded batches for a Kinesis Data Streams event source"): the batch under KinesisBatchInfo,
 * Kinesis's longer sequence numbers.
 */
export const DOCUMENTED_KINESIS = {
  requestContext: DOCUMENTED.requestContext,
  responseContext: DOCUMENTED.responseContext,
  version: '1.0',
  timestamp: '2026-01-02T03:04:05.678Z',
  KinesisBatchInfo: {
    shardId: 'shardId-000000000001',
    startSequenceNumber: '49661563547000000000000000000000000000000000000000000018',
    endSequenceNumber: '49661563547000000000000000000000000000000000000000000042',
    approximateArrivalOfFirstRecord: '2026-01-02T03:04:00Z',
    approximateArrivalOfLastRecord: '2026-01-02T03:04:01Z',
    batchSize: 3,
    streamArn: 'arn:aws:kinesis:eu-west-1:123456789012:stream/orders-changes',
  },
} as const;
