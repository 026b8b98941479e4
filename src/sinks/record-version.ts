import { RecordError, recordLabel } from '../core/errors.js';
import type { ClassifiedRecord } from '../records/types.js';

/**
 * How new the item state a record carries is, as a string that compares with `<` (JavaScript's
 * and DynamoDB's string order alike): fixed-width digits, so no number parsing is involved.
 *
 * `<11-digit epoch second>.<rank><detail>`, times cut to the stream's resolution (`resolution`
 * seconds: 1 for DynamoDB Streams, whose ApproximateCreationDateTime is rounded down to the second;
 * DynamoDB Local rounds down to the minute, 60):
 * - a stream record: its ApproximateCreationDateTime, rank `1`, then its sequence number padded to
 *   40 digits — within one step the sequence number orders an item's records;
 * - a backfill copy: the step its snapshot time falls in, rank `0`, then the snapshot's
 *   milliseconds within that step (two backfills of the same step order by them).
 *
 * The rank is the tie rule: in the second of the snapshot a stream record wins over the backfill
 * copy. The export at T may or may not hold a write made in T's second, and a stream record whose
 * write the export lacks must not be skipped (the sink would keep the older state for good); one
 * the export does hold carries that same state or a state the stream then replaces in order. So
 * the stream's record is the later truth whenever the second cannot tell (docs/backfill.md,
 * "Handoff to the stream").
 */
export type RecordVersion = string;

const SECOND_DIGITS = 11;
const SEQUENCE_DIGITS = 40;

/** A record whose version cannot be told: a stream record without ApproximateCreationDateTime. */
export class UnversionedRecordError extends RecordError {
  override name = 'UnversionedRecordError';
  constructor(record: ClassifiedRecord) {
    super(
      `record ${recordLabel(record)} has no ApproximateCreationDateTime: a version guard cannot order it`,
      record,
    );
  }
}

/** The start of the step `seconds` falls in, as fixed-width digits. */
function step(seconds: number, resolution: number): string {
  return String(Math.floor(seconds / resolution) * resolution).padStart(SECOND_DIGITS, '0');
}

/**
 * The record's version (see RecordVersion) at the stream's time resolution in seconds (default 1);
 * throws UnversionedRecordError when it has none.
 */
export function recordVersion(record: ClassifiedRecord, resolution = 1): RecordVersion {
  const origin = record.origin;
  if (origin.source === 'backfill') {
    const ms = Math.floor(origin.snapshotTime);
    const within = ms - Math.floor(ms / (resolution * 1000)) * resolution * 1000;
    return `${step(ms / 1000, resolution)}.0${String(within).padStart(5, '0')}`;
  }
  const created = record.approximateCreationTime;
  if (created === undefined) throw new UnversionedRecordError(record);
  return `${step(created, resolution)}.1${record.sequenceNumber.padStart(SEQUENCE_DIGITS, '0')}`;
}

/**
 * The item a record is about, as one string: its key attributes in DynamoDB JSON, sorted by name.
 * A stream and a Scan or export give the same text for the same key, as DynamoDB returns numbers
 * in one normal form and binary as the same bytes.
 */
export function itemKeyOf(record: ClassifiedRecord): string {
  const keys = record.raw.dynamodb.Keys;
  const names = Object.keys(keys).sort();
  let out = '';
  for (const name of names)
    out += `${out === '' ? '' : ','}${JSON.stringify(name)}:${JSON.stringify(keys[name])}`;
  return `{${out}}`;
}
