import { defineOptions } from '../core/options.js';
import { judgeTtl } from '../records/check-ttl.js';
import type { ClassifiedRecord } from '../records/types.js';
import type { TtlHealth } from './config.js';
import { type Ledger, loggerOf } from './ledger.js';
import { TTL_HEALTH } from './ttl-health-key.js';

// The TTL health check is opt-in, as validated() and sinkTracer() are: only a handler that calls
// ttlHealth() links it (and the TTL rules of records/check-ttl). An archive of TTL deletes, whose
// records carry no new image to judge, carries none.

/** What ttlHealth() returns, its check's type known here. */
interface TtlHealthWithCheck extends TtlHealth {
  readonly [TTL_HEALTH]: (ledger: Ledger, record: ClassifiedRecord, nowSeconds: number) => void;
}

const readArguments = /* @__PURE__ */ defineOptions<{ attribute: string }>()('ttlHealth', {
  attribute: { kind: 'nonEmptyString', required: true },
});

/**
 * The pipeline's `ttlAttribute`: `createStreamHandler({ routes, ttlAttribute: ttlHealth('expiresAt') })`
 * names the table's TTL attribute, and every insert or modify whose new image has a TTL DynamoDB
 * will never act on is logged and counted (TtlNeverExpires). Calling it links the check into the
 * handler; a bare attribute name given as `ttlAttribute` is refused naming this call.
 */
export function ttlHealth(attribute: string): TtlHealth {
  readArguments({ attribute });
  const health: TtlHealthWithCheck = {
    attribute,
    [TTL_HEALTH]: (ledger, record, nowSeconds) => checkTtl(ledger, record, attribute, nowSeconds),
  };
  return health;
}

/**
 * DynamoDB never validates TTL: an item whose TTL attribute is a string or in milliseconds silently
 * never expires. Such an insert or modify is counted and logged by its eventID and the names of
 * its key attributes; the key values and the image, item data, only with logImages.
 */
function checkTtl(ledger: Ledger, record: ClassifiedRecord, ttlAttribute: string, nowSeconds: number): void {
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
