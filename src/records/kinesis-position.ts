// What a record's position needs of Kinesis, apart from its decoder (records/kinesis.ts): a
// DynamoDB Streams handler links these (a dead-letter entry of an unparseable Kinesis record names
// its sequence number) but not the decoder, which only kinesisSource() links.

/** Kinesis documents sequence numbers as `0|([1-9]\d{0,128})`. */
export const MAX_KINESIS_SEQUENCE_DIGITS = 129;

/** The Kinesis sequence number of a raw Lambda Kinesis record, when it has a usable one. */
export function kinesisSequenceNumberOf(raw: unknown): string | undefined {
  const k = (raw as { kinesis?: { sequenceNumber?: unknown } } | null | undefined)?.kinesis;
  const s = k !== null && typeof k === 'object' ? k.sequenceNumber : undefined;
  return typeof s === 'string' && s !== '' ? s : undefined;
}
