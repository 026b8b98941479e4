import type { ClassifiedRecord } from '../records/types.js';
import type { ReadBatch } from './read-batch.js';

/**
 * Kinesis Data Streams for DynamoDB may deliver an item's changes more than once and out of
 * order; AWS says to order them by ApproximateCreationDateTime. Within one batch this stage:
 * - drops exact duplicates: a record whose DynamoDB eventID and Kinesis data equal an earlier
 *   record's (the first, lowest sequence number, is kept);
 * - hands an item's records (same table, same keys) to the pipeline in creation-time order, ties in
 *   sequence order, by permuting them among the batch positions that item's records hold. Records
 *   of other items keep their positions, so per-item order is all that changes.
 * After a permutation, the record at a position may have a higher sequence number than a later
 * one, so the partial batch response reports the lowest sequence number among every record from
 * the first not done on (`reportAt`): Lambda redelivers from there, so nothing not done is skipped.
 */
export interface OrderedBatch {
  readonly raws: unknown[];
  readonly records: (ClassifiedRecord | undefined)[];
  readonly errors: unknown[] | undefined;
  /** How many exact duplicates were dropped. */
  readonly duplicates: number;
  /** Per position, the lowest sequence number from it to the end; undefined when no record moved. */
  readonly reportAt: string[] | undefined;
}

interface KinesisRaw {
  kinesis: { data: string };
}

/** Decimal sequence numbers compared as numbers: shorter is smaller (no leading zeros). */
function seqLess(a: string, b: string): boolean {
  return a.length !== b.length ? a.length < b.length : a < b;
}

/** Microseconds since the epoch of a Kinesis record's exact creation time. */
function creationMicros(record: ClassifiedRecord): number {
  const origin = record.origin;
  if (origin.source !== 'kinesis') return (record.approximateCreationTime ?? 0) * 1e6;
  return origin.precision === 'MILLISECOND' ? origin.creationTime * 1e3 : origin.creationTime;
}

/** One item's identity: its table and its keys, attribute names sorted (key order is not meaningful). */
function itemKeyOf(record: ClassifiedRecord): string {
  const keys = record.raw.dynamodb.Keys;
  const names = Object.keys(keys).sort();
  let out = record.tableName ?? '';
  for (const name of names) out += `\u0000${name}\u0000${JSON.stringify(keys[name])}`;
  return out;
}

/** Drops exact duplicates and puts each item's records in creation-time order (see OrderedBatch). */
export function orderKinesisBatch(raws: readonly unknown[], read: ReadBatch): OrderedBatch {
  const seen = new Map<string, number>();
  const keep: number[] = [];
  let duplicates = 0;
  for (let i = 0; i < raws.length; i++) {
    const record = read.records[i];
    if (record !== undefined) {
      const first = seen.get(record.eventID);
      if (
        first !== undefined &&
        (raws[first] as KinesisRaw).kinesis.data === (raws[i] as KinesisRaw).kinesis.data
      ) {
        duplicates++;
        continue;
      }
      if (first === undefined) seen.set(record.eventID, i);
    }
    keep.push(i);
  }
  const n = keep.length;
  const outRaws = keep.map((i) => raws[i]);
  const records = keep.map((i) => read.records[i]);
  const errors = read.errors === undefined ? undefined : keep.map((i) => read.errors![i]);

  // Kinesis partitions DynamoDB's changes by item, so records whose partition key no other record
  // of the batch has are alone with their item: only the others need the item key built.
  const partitionCounts = new Map<string, number>();
  for (let p = 0; p < n; p++) {
    const origin = records[p]?.origin;
    if (origin?.source === 'kinesis')
      partitionCounts.set(origin.partitionKey, (partitionCounts.get(origin.partitionKey) ?? 0) + 1);
  }
  const positions = new Map<string, number[]>();
  for (let p = 0; p < n; p++) {
    const record = records[p];
    if (record === undefined) continue;
    const origin = record.origin;
    if (origin.source === 'kinesis' && partitionCounts.get(origin.partitionKey) === 1) continue;
    const key = itemKeyOf(record);
    const list = positions.get(key);
    if (list === undefined) positions.set(key, [p]);
    else list.push(p);
  }
  let moved = false;
  for (const list of positions.values()) {
    if (list.length < 2) continue;
    const order = list
      .map((p) => ({ p, at: creationMicros(records[p]!) }))
      .sort((a, b) => a.at - b.at || a.p - b.p);
    if (order.every((o, k) => o.p === list[k])) continue;
    moved = true;
    const taken = order.map((o) => ({ raw: outRaws[o.p], record: records[o.p] }));
    for (let k = 0; k < list.length; k++) {
      outRaws[list[k]!] = taken[k]!.raw;
      records[list[k]!] = taken[k]!.record;
    }
  }
  return {
    raws: outRaws,
    records,
    errors,
    duplicates,
    reportAt: moved ? suffixMinimum(records, outRaws) : undefined,
  };
}

function suffixMinimum(
  records: readonly (ClassifiedRecord | undefined)[],
  raws: readonly unknown[],
): string[] {
  const out = new Array<string>(records.length);
  let lowest: string | undefined;
  for (let p = records.length - 1; p >= 0; p--) {
    const s =
      records[p]?.sequenceNumber ??
      (raws[p] as { kinesis: { sequenceNumber: string } }).kinesis.sequenceNumber;
    if (lowest === undefined || seqLess(s, lowest)) lowest = s;
    out[p] = lowest;
  }
  return out;
}
