import type { LambdaStreamRecord } from '../../records/index.js';

/**
 * DynamoDB Streams keeps a record for 24 hours, then trims it: "-1 means infinite: failed records
 * are retried until the record expires. The data retention limit for DynamoDB Streams is 24 hours"
 * (Lambda developer guide, "DynamoDB event source mapping parameters", MaximumRecordAgeInSeconds).
 * Reading a trimmed position fails with TrimmedDataAccessException, so a batch retried that long
 * is gone from the stream.
 */
export const STREAM_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Epoch ms of a record's ApproximateCreationDateTime; undefined when it has none. */
export function createdAtMs(record: LambdaStreamRecord): number | undefined {
  const created = record.dynamodb.ApproximateCreationDateTime;
  return created === undefined ? undefined : created * 1000;
}

/**
 * When a record stamped at `stampedAtMs` and delivered first at `deliveredAtMs` leaves the stream. A record handed to the
 * mapping was readable when it was read, so one whose creation time is already more than 24 hours
 * before its first delivery (built events with a fixed time, a capture replayed days later) is
 * taken as written at that delivery; any other expires 24 hours after its creation.
 */
export function trimmedAtMs(stampedAtMs: number | undefined, deliveredAtMs: number): number {
  const created = stampedAtMs ?? deliveredAtMs;
  const expires = created + STREAM_RETENTION_MS;
  return expires > deliveredAtMs ? expires : deliveredAtMs + STREAM_RETENTION_MS;
}

/**
 * The entries of a batch for which `isExpired` holds, and the rest in order; undefined when none
 * does.
 */
export function splitExpired<E>(
  batch: readonly E[],
  isExpired: (entry: E) => boolean,
): { kept: E[]; expired: E[] } | undefined {
  let expired: E[] | undefined;
  let kept: E[] | undefined;
  for (let i = 0; i < batch.length; i++) {
    const entry = batch[i] as E;
    const gone = isExpired(entry);
    if (gone && !expired) {
      expired = [];
      kept = batch.slice(0, i);
    }
    if (gone) expired?.push(entry);
    else kept?.push(entry);
  }
  return expired && kept ? { kept, expired } : undefined;
}
