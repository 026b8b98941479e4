import {
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as KinesisApiRecord,
  type KinesisClient,
} from '@aws-sdk/client-kinesis';
import { fromKinesisApiRecord } from '../records/kinesis-api-record.js';
import type { LambdaKinesisRecord } from '../records/kinesis-encode.js';
import { kinesisStreamName, kinesisStreamRegion } from '../records/kinesis-stream-arn.js';
import type { StreamBatchInfo } from '../records/on-failure-record.js';
import { collectRange } from './collect-range.js';
import { type ExpiredReason, StreamRangeExpiredError } from './errors.js';

/** The calls a Kinesis range read makes; a KinesisClient or a wrapper around one. */
export type KinesisApi = Pick<KinesisClient, 'send'>;

const EXPIRED: Record<string, ExpiredReason> = {
  ExpiredIteratorException: 'iterator-expired',
  ResourceNotFoundException: 'shard-gone',
};

/**
 * An iterator at the range's first record. Kinesis refuses (InvalidArgumentException) a sequence
 * number that did not come from the shard as it is now: the stream was deleted and made again
 * under its name, so the range is gone with the old one. The on-failure record's numbers are
 * checked before, so the refusal cannot be of their form.
 */
async function startAt(
  kinesis: KinesisApi,
  info: StreamBatchInfo,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  try {
    const start = await kinesis.send(
      new GetShardIteratorCommand({
        StreamName: kinesisStreamName(info.streamArn),
        ShardId: info.shardId,
        ShardIteratorType: 'AT_SEQUENCE_NUMBER',
        StartingSequenceNumber: info.startSequenceNumber,
      }),
      { abortSignal: signal },
    );
    return start.ShardIterator;
  } catch (error) {
    if ((error as { name?: string })?.name === 'InvalidArgumentException')
      throw new StreamRangeExpiredError('shard-gone', info, { cause: error });
    throw error;
  }
}

/**
 * The records of a Kinesis on-failure record's range (KinesisBatchInfo), in shard order, as
 * Lambda delivers them to a Kinesis-triggered function: from startSequenceNumber
 * (AT_SEQUENCE_NUMBER) through endSequenceNumber inclusive. The stream keeps records for its
 * retention period (24 hours unless raised, up to 365 days); a range older than that throws
 * StreamRangeExpiredError. A page with no records and nothing behind the tip (MillisBehindLatest
 * 0), or a closed shard read to its end, ends the read.
 */
export function readKinesisRange(
  kinesis: KinesisApi,
  info: StreamBatchInfo,
  signal?: AbortSignal,
): Promise<LambdaKinesisRecord[]> {
  const context = {
    shardId: info.shardId,
    streamArn: info.streamArn,
    awsRegion: kinesisStreamRegion(info.streamArn),
  };
  return collectRange(info, pages(kinesis, info, signal), {
    sequenceOf: (record) => record.SequenceNumber ?? '',
    toLambda: (record) => fromKinesisApiRecord(record, context),
    expired: EXPIRED,
  });
}

/** The shard's GetRecords pages from the range's start, until the shard is closed or at its tip. */
async function* pages(
  kinesis: KinesisApi,
  info: StreamBatchInfo,
  signal: AbortSignal | undefined,
): AsyncGenerator<KinesisApiRecord[]> {
  let iterator = await startAt(kinesis, info, signal);
  while (iterator !== undefined) {
    const page = await kinesis.send(new GetRecordsCommand({ ShardIterator: iterator }), {
      abortSignal: signal,
    });
    const records = page.Records ?? [];
    yield records;
    if (records.length === 0 && (page.MillisBehindLatest ?? 0) === 0) return;
    iterator = page.NextShardIterator ?? undefined;
  }
}
