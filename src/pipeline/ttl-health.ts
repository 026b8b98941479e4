import { judgeTtl } from '../records/check-ttl.js';
import type { ClassifiedRecord } from '../records/types.js';
import { type Ledger, loggerOf } from './ledger.js';

/**
 * DynamoDB never validates TTL: an item whose TTL attribute is a string or in milliseconds silently
 * never expires. Such an insert or modify is counted and logged by its eventID and the names of
 * its key attributes; the key values and the image, item data, only with logImages.
 */
export function checkTtl(
  ledger: Ledger,
  record: ClassifiedRecord,
  ttlAttribute: string,
  nowSeconds: number,
): void {
  const image = record.raw.dynamodb.NewImage;
  // KEYS_ONLY / OLD_IMAGE streams carry no new image: nothing to judge.
  if (image === undefined) return;
  const check = judgeTtl(image, ttlAttribute, nowSeconds);
  if (check.expires) return;
  ledger.metrics.ttlNeverExpires++;
  loggerOf(ledger).warn(
    {
      eventID: record.eventID,
      sequenceNumber: record.sequenceNumber,
      keyAttributes: Object.keys(record.raw.dynamodb.Keys),
      ttlAttribute,
      ttlProblem: check.reason,
      ...(ledger.config.logImages ? { Keys: record.raw.dynamodb.Keys, NewImage: image } : {}),
    },
    check.message,
  );
}
