import { parseStreamEvent } from '../records/index.js';
import type { ClassifiedRecord, LambdaStreamRecord } from '../records/types.js';

export interface SampleRecordOptions {
  /** Index of the first record; sequence numbers and keys derive from it. Default 0. */
  start?: number;
  /** Table name in the eventSourceARN. Default `archive-sample`. */
  table?: string;
  /** ApproximateCreationDateTime of the first record, epoch seconds. Default 2026-01-15T10:00:00Z. */
  firstTime?: number;
  /** Seconds between consecutive records. Default 1. */
  spacingSeconds?: number;
  /** Set on the records as if a GetRecords poller read them. */
  shardId?: string;
}

const BASE_SEQUENCE = 10n ** 20n;

/** A stream sequence number as DynamoDB writes them: 21 decimal digits, increasing. */
export function sampleSequenceNumber(index: number): string {
  return (BASE_SEQUENCE + BigInt(index)).toString();
}

/**
 * Realistic TTL-delete stream records in the Lambda shape (what `Records` of a Lambda event holds):
 * composite keys, a 38-digit number, binary, a string set, a nested map and list.
 */
export function sampleTtlDeleteRecords(
  count: number,
  options: SampleRecordOptions = {},
): LambdaStreamRecord[] {
  const start = options.start ?? 0;
  const table = options.table ?? 'archive-sample';
  const firstTime = options.firstTime ?? Date.UTC(2026, 0, 15, 10) / 1000;
  const spacing = options.spacingSeconds ?? 1;
  const arn = `arn:aws:dynamodb:us-east-1:123456789012:table/${table}/stream/2026-01-01T00:00:00.000`;
  const out: LambdaStreamRecord[] = new Array(count);
  for (let n = 0; n < count; n++) {
    const i = start + n;
    const created = firstTime + n * spacing;
    const payload = Buffer.alloc(24 + (i % 16));
    for (let b = 0; b < payload.length; b++) payload[b] = (i * 31 + b * 7) & 0xff;
    out[n] = {
      eventID: `ev-${i.toString(16).padStart(8, '0')}`,
      eventName: 'REMOVE',
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'us-east-1',
      eventSourceARN: arn,
      userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' },
      dynamodb: {
        ApproximateCreationDateTime: created,
        Keys: { pk: { S: `session#${i % 997}` }, sk: { S: `event#${i.toString().padStart(10, '0')}` } },
        OldImage: {
          pk: { S: `session#${i % 997}` },
          sk: { S: `event#${i.toString().padStart(10, '0')}` },
          amount: { N: `${12345678901234567890123456789012345678n + BigInt(i)}` },
          ratio: { N: `0.${(i * 7919).toString().padStart(6, '0')}` },
          precise: {
            N: `1234567890123456789012345.${(i % 10_000_000_000_000).toString().padStart(13, '0')}`,
          },
          payload: { B: payload.toString('base64') },
          tags: { SS: ['archived', `bucket-${i % 13}`] },
          attrs: {
            M: { user: { S: `user-${i % 5000}` }, hits: { N: String(i % 1000) }, ok: { BOOL: i % 2 === 0 } },
          },
          path: { L: [{ S: '/home' }, { S: `/item/${i}` }, { NULL: true }] },
          ttl: { N: String(Math.floor(created) - 5) },
        },
        SequenceNumber: sampleSequenceNumber(i),
        SizeBytes: 420,
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
    };
  }
  return out;
}

/** `sampleTtlDeleteRecords`, parsed into classified records. */
export function sampleTtlDeletes(count: number, options: SampleRecordOptions = {}): ClassifiedRecord[] {
  const raw = sampleTtlDeleteRecords(count, options);
  return parseStreamEvent(
    { Records: raw },
    options.shardId === undefined ? undefined : { shardId: options.shardId },
  );
}
