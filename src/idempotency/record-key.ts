import { recordKeyIdentity } from '../records/key-identity.js';
import type { ClassifiedRecord } from '../records/types.js';

/**
 * What makes two deliveries "the same record" for an idempotent side effect:
 * - `'eventID'` (default): the stream record's own id, the same on every redelivery of it;
 * - `'item-change'`: the item's keys (by value: `1.5` and `1.50` are one key) and the record's
 *   sequence number, for sources that give one
 *   change several event ids (a replay from an archive, a dead-letter redrive after a re-export);
 * - a function of the record, for anything else (a business id in the image).
 */
export type IdempotencyKey = 'eventID' | 'item-change' | ((record: ClassifiedRecord) => string);

/** The payload Powertools hashes into the idempotency record's id: small, JSON, stable. */
export function keyPayloadOf(key: IdempotencyKey, record: ClassifiedRecord): { id: string } {
  if (key === 'eventID') return { id: record.eventID };
  if (key === 'item-change') {
    // The keys by value, not as they arrived: DynamoDB Local's MODIFY spells a number key as the
    // request wrote it (`1.50`), an archive's or an export's copy as stored (`1.5`).
    return { id: `${recordKeyIdentity(record)}@${record.sequenceNumber}` };
  }
  return { id: key(record) };
}
