import { recordKeyIdentity } from '../records/key-identity.js';
import type { ClassifiedRecord } from '../records/types.js';
import type { ReadBatch } from './read-batch.js';

/**
 * Kinesis Data Streams for DynamoDB may deliver an item's changes more than once and out of
 * order; AWS says to order them by ApproximateCreationDateTime. Within one batch this stage:
 * - drops exact duplicates: a record of the same item whose DynamoDB eventID and Kinesis data equal
 *   an earlier record's (the first, lowest sequence number, is kept);
 * - hands an item's records (same table, same keys by value: `1.5` and `1.50` are one key) to the
 *   pipeline in creation-time order, ties in sequence order, by permuting them among the batch
 *   positions that item's records hold. Records of other items keep their positions, so per-item
 *   order is all that changes. Items are told apart by their change data alone, never by the
 *   Kinesis partition key: the rule holds however the producer chose partition keys.
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

/**
 * One item's identity: its table (length-prefixed, so no table name runs into a key) and its keys
 * by value. Undefined for a record whose keys DynamoDB could not hold: it is its own item, left
 * where it is, and fails where its keys are read.
 */
function itemOf(record: ClassifiedRecord): string | undefined {
  const table = record.tableName ?? '';
  try {
    return `${table.length}:${table}${recordKeyIdentity(record)}`;
  } catch {
    return undefined;
  }
}

/** Drops exact duplicates and puts each item's records in creation-time order (see OrderedBatch). */
export function orderKinesisBatch(raws: readonly unknown[], read: ReadBatch): OrderedBatch {
  // Each record's item, computed once: duplicates and ordering both group by it.
  const items = read.records.map((record) => (record === undefined ? undefined : itemOf(record)));
  const seen = new Map<string, number>();
  const keep: number[] = [];
  let duplicates = 0;
  for (let i = 0; i < raws.length; i++) {
    const record = read.records[i];
    const item = items[i];
    if (record !== undefined && item !== undefined) {
      const change = `${item}\u0000${record.eventID}`;
      const first = seen.get(change);
      if (
        first !== undefined &&
        (raws[first] as KinesisRaw).kinesis.data === (raws[i] as KinesisRaw).kinesis.data
      ) {
        duplicates++;
        continue;
      }
      if (first === undefined) seen.set(change, i);
    }
    keep.push(i);
  }
  const n = keep.length;
  const outRaws = keep.map((i) => raws[i]);
  const records = keep.map((i) => read.records[i]);
  const errors = read.errors === undefined ? undefined : keep.map((i) => read.errors![i]);

  const positions = new Map<string, number[]>();
  for (let p = 0; p < n; p++) {
    const item = items[keep[p]!];
    if (item === undefined) continue;
    const list = positions.get(item);
    if (list === undefined) positions.set(item, [p]);
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
