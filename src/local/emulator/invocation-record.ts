import type {
  FailureCondition,
  LambdaStreamRecord,
  StreamBatchInfo,
  StreamInvocationRecord,
} from '../../records/index.js';
import type { MappingInvocationRecord } from '../../records/on-failure-record.js';
import { DYNAMODB_SOURCE, type RecordSource } from './record-source.js';
import { isoSecond } from './tumbling-window.js';

/** What the mapping knows about a batch it gives up on. */
export interface DiscardedBatch<R = LambdaStreamRecord> {
  requestId: string;
  functionArn: string;
  shardId: string;
  streamArn: string;
  /** The batch, in shard order (at least one record). */
  records: readonly R[];
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
  return mappingInvocationRecord(batch, DYNAMODB_SOURCE) as StreamInvocationRecord;
}

/** The invocation record for a batch of any source; its batch info under the source's key. */
export function mappingInvocationRecord<R>(
  batch: DiscardedBatch<R>,
  source: RecordSource<R>,
): MappingInvocationRecord {
  const first = batch.records[0] as R;
  const last = batch.records[batch.records.length - 1] as R;
  const info: StreamBatchInfo = {
    shardId: batch.shardId,
    startSequenceNumber: source.identity(first).sequenceNumber,
    endSequenceNumber: source.identity(last).sequenceNumber,
    approximateArrivalOfFirstRecord: arrival(source.stampedAtMs(first)),
    approximateArrivalOfLastRecord: arrival(source.stampedAtMs(last)),
    batchSize: batch.records.length,
    streamArn: batch.streamArn,
  };
  const record = {
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
    version: '1.0' as const,
    timestamp: new Date(batch.now).toISOString(),
  };
  return source.batchInfoKey === 'KinesisBatchInfo'
    ? { ...record, KinesisBatchInfo: info }
    : { ...record, DDBStreamBatchInfo: info };
}

/** Whole seconds, as in Lambda's invocation records (`2019-11-14T00:13:19Z`); the stream's clock has no more. */
function arrival(stampedAtMs: number | undefined): string {
  return isoSecond(stampedAtMs ?? 0);
}
