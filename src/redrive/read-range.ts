import {
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { type LambdaStreamRecord, type StreamBatchInfo, toLambdaRecord } from '../records/index.js';
import { type ExpiredReason, StreamRangeExpiredError } from './errors.js';

/** The calls a range read makes; a DynamoDBStreamsClient or a wrapper around one. */
export type StreamsApi = Pick<DynamoDBStreamsClient, 'send'>;

/**
 * Empty GetRecords pages in a row after which an open shard is taken to hold nothing more
 * (DynamoDB Streams returns empty pages mid-shard too, so one is not enough).
 */
const EMPTY_PAGES_AT_END = 5;

const EXPIRED: Record<string, ExpiredReason> = {
  TrimmedDataAccessException: 'trimmed',
  ExpiredIteratorException: 'iterator-expired',
  ResourceNotFoundException: 'shard-gone',
};

/**
 * The records of an on-failure record's range, in shard order, in Lambda's event shape: from
 * startSequenceNumber (AT_SEQUENCE_NUMBER) through endSequenceNumber inclusive. The range may
 * hold records the mapping's filter dropped from the original batch; the function filters them
 * again. Throws StreamRangeExpiredError when the stream no longer has the range.
 */
export async function readStreamRange(
  streams: StreamsApi,
  info: StreamBatchInfo,
  signal?: AbortSignal,
): Promise<LambdaStreamRecord[]> {
  const end = BigInt(info.endSequenceNumber);
  const out: LambdaStreamRecord[] = [];
  try {
    const start = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: info.streamArn,
        ShardId: info.shardId,
        ShardIteratorType: 'AT_SEQUENCE_NUMBER',
        SequenceNumber: info.startSequenceNumber,
      }),
      { abortSignal: signal },
    );
    let iterator = start.ShardIterator;
    let empty = 0;
    while (iterator !== undefined && empty < EMPTY_PAGES_AT_END) {
      const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }), {
        abortSignal: signal,
      });
      const records = page.Records ?? [];
      empty = records.length === 0 ? empty + 1 : 0;
      for (const sdkRecord of records) {
        const sequence = sdkRecord.dynamodb?.SequenceNumber ?? '';
        if (out.length === 0 && sequence !== info.startSequenceNumber)
          // The first record must be the one asked for: anything later means it was trimmed.
          throw new StreamRangeExpiredError('start-missing', info);
        if (BigInt(sequence) > end) return out;
        out.push(toLambdaRecord(sdkRecord, { streamArn: info.streamArn }));
        if (BigInt(sequence) === end) return out;
      }
      iterator = page.NextShardIterator;
    }
  } catch (error) {
    if (error instanceof StreamRangeExpiredError) throw error;
    const reason = EXPIRED[(error as { name?: string })?.name ?? ''];
    if (reason !== undefined) throw new StreamRangeExpiredError(reason, info, { cause: error });
    throw error;
  }
  // The shard ended (or went quiet) before the end of the range: what is left is gone.
  if (out.length === 0) throw new StreamRangeExpiredError('start-missing', info);
  return out;
}
