import {
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { type LambdaStreamRecord, type StreamBatchInfo, toLambdaRecord } from '../records/index.js';
import { collectRange } from './collect-range.js';
import type { ExpiredReason } from './errors.js';

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
export function readStreamRange(
  streams: StreamsApi,
  info: StreamBatchInfo,
  signal?: AbortSignal,
): Promise<LambdaStreamRecord[]> {
  return collectRange(info, pages(streams, info, signal), {
    sequenceOf: (record) => record.dynamodb?.SequenceNumber ?? '',
    toLambda: (record) => toLambdaRecord(record, { streamArn: info.streamArn }),
    expired: EXPIRED,
  });
}

/** The shard's GetRecords pages from the range's start, until the shard ends or goes quiet. */
async function* pages(
  streams: StreamsApi,
  info: StreamBatchInfo,
  signal: AbortSignal | undefined,
): AsyncGenerator<NonNullable<GetRecordsCommandOutput['Records']>> {
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
    yield records;
    iterator = page.NextShardIterator;
  }
}
