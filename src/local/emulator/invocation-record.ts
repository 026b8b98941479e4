import type { LambdaStreamRecord } from '../../records/index.js';
import type { FailureCondition, StreamInvocationRecord } from './destinations.js';
import { isoSecond } from './tumbling-window.js';

/** What the mapping knows about a batch it gives up on. */
export interface DiscardedBatch {
  requestId: string;
  functionArn: string;
  shardId: string;
  streamArn: string;
  /** The batch, in shard order (at least one record). */
  records: readonly LambdaStreamRecord[];
  condition: FailureCondition;
  /** Invocations of this batch so far (0: discarded for its age before any). */
  invocations: number;
  /** `Unhandled` after a function error or timeout; undefined after a partial batch response. */
  functionError: string | undefined;
  /** When the clock read; epoch ms. */
  now: number;
}

/**
 * The invocation record Lambda sends to an on-failure destination for a DynamoDB stream (Lambda
 * developer guide, "Error handling for DynamoDB event sources", the example invocation record):
 * `responseContext` only when the function was invoked.
 */
export function invocationRecord(batch: DiscardedBatch): StreamInvocationRecord {
  const first = batch.records[0] as LambdaStreamRecord;
  const last = batch.records[batch.records.length - 1] as LambdaStreamRecord;
  return {
    requestContext: {
      requestId: batch.requestId,
      functionArn: batch.functionArn,
      condition: batch.condition,
      approximateInvokeCount: batch.invocations,
    },
    ...(batch.invocations > 0
      ? {
          responseContext: {
            statusCode: 200,
            executedVersion: '$LATEST',
            ...(batch.functionError ? { functionError: batch.functionError } : {}),
          },
        }
      : {}),
    version: '1.0',
    timestamp: new Date(batch.now).toISOString(),
    DDBStreamBatchInfo: {
      shardId: batch.shardId,
      startSequenceNumber: first.dynamodb.SequenceNumber,
      endSequenceNumber: last.dynamodb.SequenceNumber,
      approximateArrivalOfFirstRecord: arrival(first),
      approximateArrivalOfLastRecord: arrival(last),
      batchSize: batch.records.length,
      streamArn: batch.streamArn,
    },
  };
}

/** Whole seconds, as in Lambda's invocation records (`2019-11-14T00:13:19Z`); the stream's clock has no more. */
function arrival(record: LambdaStreamRecord): string {
  return isoSecond((record.dynamodb.ApproximateCreationDateTime ?? 0) * 1000);
}
