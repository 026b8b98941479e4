import type { StreamBatchInfo } from '../records/on-failure-record.js';
import { type ExpiredReason, StreamRangeExpiredError } from './errors.js';

/** How one stream's reader names its records and its errors. */
export interface RangeReading<A, R> {
  sequenceOf(record: A): string;
  /** The record as Lambda delivers it to the function. */
  toLambda(record: A): R;
  /** The stream's error names that mean the range is gone. */
  expired: Readonly<Record<string, ExpiredReason>>;
}

/**
 * The records of a batch's range, from pages read in shard order from its first record: both
 * streams' readers share what makes a range complete or gone. The first record must be the one
 * asked for (a later one means the start was trimmed); the end is inclusive; a shard that ends,
 * or reaches its tip, before any record of the range means the range is gone.
 */
export async function collectRange<A, R>(
  info: StreamBatchInfo,
  pages: AsyncIterable<readonly A[]>,
  reading: RangeReading<A, R>,
): Promise<R[]> {
  const end = BigInt(info.endSequenceNumber);
  const out: R[] = [];
  try {
    for await (const page of pages) {
      for (const record of page) {
        const sequence = reading.sequenceOf(record);
        if (out.length === 0 && sequence !== info.startSequenceNumber)
          throw new StreamRangeExpiredError('start-missing', info);
        if (BigInt(sequence) > end) return out;
        out.push(reading.toLambda(record));
        if (BigInt(sequence) === end) return out;
      }
    }
  } catch (error) {
    if (error instanceof StreamRangeExpiredError) throw error;
    const reason = reading.expired[(error as { name?: string })?.name ?? ''];
    if (reason !== undefined) throw new StreamRangeExpiredError(reason, info, { cause: error });
    throw error;
  }
  if (out.length === 0) throw new StreamRangeExpiredError('start-missing', info);
  return out;
}
