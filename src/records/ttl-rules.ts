/**
 * DynamoDB's TTL rules, in one place for classifyRecord's heuristic and checkTtl.
 * TTL deletes only items whose Number TTL, read as epoch seconds, is in the past — but not more
 * than five years in the past: older values are ignored and the item is never deleted.
 */
export const FIVE_YEARS_SECONDS = 1826 * 86_400;

/** The principal a TTL delete carries in the region whose TTL process deleted the item. */
export const TTL_PRINCIPAL = 'dynamodb.amazonaws.com';
export const TTL_IDENTITY_TYPE = 'Service';
