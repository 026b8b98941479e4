import { RecordError, recordLabel } from '../core/errors.js';
import { type KeyIdentity, recordKeyIdentity } from '../records/key-identity.js';
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
 *   milliseconds within that step, padded to the width of the step's last millisecond (at least
 *   5 digits), so two backfills of the same step order by them at every resolution.
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
/**
 * Digits of a backfill copy's milliseconds within its step: 5 up to a 100-second step (the width
 * versions have always had there), more for a longer step, whose last millisecond needs them:
 * padding a 6-digit value to 5 would sort 99,999 ms after 100,000 ms.
 */
const MIN_WITHIN_DIGITS = 5;

function withinDigits(resolution: number): number {
  return Math.max(MIN_WITHIN_DIGITS, String(resolution * 1000 - 1).length);
}

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
    return `${step(ms / 1000, resolution)}.0${String(within).padStart(withinDigits(resolution), '0')}`;
  }
  const created = record.approximateCreationTime;
  if (created === undefined) throw new UnversionedRecordError(record);
  return `${step(created, resolution)}.1${record.sequenceNumber.padStart(SEQUENCE_DIGITS, '0')}`;
}

/**
 * The item a record is about: its keys' identity by value (records/key-identity), so a stream
 * record, a Scan and an export name one item alike however a number key is spelled.
 */
export function itemKeyOf(record: ClassifiedRecord): KeyIdentity {
  return recordKeyIdentity(record);
}
