import { TidewaterError } from '../core/errors.js';
import type { StreamBatchInfo } from '../records/index.js';

/** Why redrive could not use an on-failure message or object. */
export type RedriveMessageProblem =
  | 'malformed'
  | 'unknown-version'
  | 'other-stream'
  | 'unknown-shape'
  /** A dead-letter pointer to an object outside the pointer bucket and prefix redrive was given. */
  | 'pointer-outside'
  /** Reading what the message names failed (a missing bucket or object, a stream call refused). */
  | 'unreadable'
  /** An object larger than redrive reads. */
  | 'too-large'
  /** The records succeeded but the message or object could not be removed. */
  | 'remove-failed';

/**
 * One message (SQS message id) or object (S3 key) that redrive cannot use. It is left where it
 * is and reported; the rest of the run goes on.
 */
export class RedriveMessageError extends TidewaterError {
  override name = 'RedriveMessageError';
  readonly problem: RedriveMessageProblem;
  /** `sqs:<message id>` or `s3://<bucket>/<key>`. */
  readonly source: string;

  constructor(problem: RedriveMessageProblem, source: string, detail: string, options?: { cause?: unknown }) {
    super(`${source}: ${detail} (${problem}); left in place`, options);
    this.problem = problem;
    this.source = source;
  }
}

/** Why the stream cannot give a range back. */
export type ExpiredReason = 'trimmed' | 'iterator-expired' | 'shard-gone' | 'start-missing';

/**
 * The stream no longer holds a batch an on-failure record names (DynamoDB Streams keeps 24
 * hours). The message is left in place; the records must come from elsewhere.
 */
export class StreamRangeExpiredError extends TidewaterError {
  override name = 'StreamRangeExpiredError';
  readonly reason: ExpiredReason;
  readonly streamArn: string;
  readonly shardId: string;
  readonly startSequenceNumber: string;
  readonly endSequenceNumber: string;
  /** Arrival of the first and last records, from the on-failure record: the time range to recover. */
  readonly from: string;
  readonly to: string;

  constructor(reason: ExpiredReason, info: StreamBatchInfo, options?: { cause?: unknown }) {
    super(
      `stream ${info.streamArn} no longer holds shard ${info.shardId} sequence numbers ${info.startSequenceNumber} ` +
        `to ${info.endSequenceNumber} (${reason}); recover the items written between ` +
        `${info.approximateArrivalOfFirstRecord} and ${info.approximateArrivalOfLastRecord} from a table export ` +
        '(`tidewater backfill`, an incremental export over that window) or from the archive (readArchive in ' +
        'tidewater/archive)',
      options,
    );
    this.reason = reason;
    this.streamArn = info.streamArn;
    this.shardId = info.shardId;
    this.startSequenceNumber = info.startSequenceNumber;
    this.endSequenceNumber = info.endSequenceNumber;
    this.from = info.approximateArrivalOfFirstRecord;
    this.to = info.approximateArrivalOfLastRecord;
  }
}

/** The deployed function could not be invoked at all (not a function error: the call itself failed). */
export class RedriveInvokeError extends TidewaterError {
  override name = 'RedriveInvokeError';
}
