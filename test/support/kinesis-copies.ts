import { toKinesisRecord } from '../../src/records/index.js';
import type { ClassifiedRecord } from '../../src/records/types.js';

/** A Kinesis sequence number: 56 digits, increasing with `i`. */
export function kinesisSequenceNumber(i: number): string {
  return (49657828409187701520019995242508390119953358325192n * 1_000_000n + BigInt(i)).toString();
}

/**
 * Changes as Kinesis Data Streams for DynamoDB delivers them, on one shard, sequence numbers 10
 * apart (room for a duplicate under another one).
 */
export function kinesisCopies(changes: readonly ClassifiedRecord[], table: string) {
  return changes.map((r, i) =>
    toKinesisRecord(r.raw, {
      sequenceNumber: kinesisSequenceNumber(i * 10),
      tableName: table,
      streamArn: `arn:aws:kinesis:us-east-1:123456789012:stream/${table}-changes`,
      shardId: 'shardId-000000000001',
    }),
  );
}
