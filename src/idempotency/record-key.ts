import type { ClassifiedRecord } from '../records/types.js';

/**
 * What makes two deliveries "the same record" for an idempotent side effect:
 * - `'eventID'` (default): the stream record's own id, the same on every redelivery of it;
 * - `'item-change'`: the item's keys and the record's sequence number, for sources that give one
 *   change several event ids (a replay from an archive, a dead-letter redrive after a re-export);
 * - a function of the record, for anything else (a business id in the image).
 */
export type IdempotencyKey = 'eventID' | 'item-change' | ((record: ClassifiedRecord) => string);

/** The payload Powertools hashes into the idempotency record's id: small, JSON, stable. */
export function keyPayloadOf(key: IdempotencyKey, record: ClassifiedRecord): { id: string } {
  if (key === 'eventID') return { id: record.eventID };
  if (key === 'item-change') {
    // raw.dynamodb.Keys is DynamoDB JSON as it arrived (strings all the way down), so the same
    // item gives the same text without converting numbers or binaries.
    return { id: `${JSON.stringify(record.raw.dynamodb.Keys)}@${record.sequenceNumber}` };
  }
  return { id: key(record) };
}
