import { kinesisSequenceNumberOf } from './kinesis-position.js';

/**
 * A raw record's identity, read without parsing it: what the pipeline needs of a record that may
 * not parse at all (to report it failed, or to dead-letter it by name).
 */

/** Its sequence number (a Kinesis record's own), or undefined when it has no usable one. */
export function sequenceNumberOf(raw: unknown): string | undefined {
  const d = (raw as { dynamodb?: { SequenceNumber?: unknown } } | null | undefined)?.dynamodb;
  const s = d !== null && typeof d === 'object' ? d.SequenceNumber : undefined;
  return typeof s === 'string' && s !== '' ? s : kinesisSequenceNumberOf(raw);
}

/** Its eventID, or undefined when it has none. */
export function eventIdOf(raw: unknown): string | undefined {
  const id = (raw as { eventID?: unknown } | null | undefined)?.eventID;
  return typeof id === 'string' ? id : undefined;
}
