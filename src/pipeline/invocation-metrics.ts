/**
 * What one invocation counted, as small integers only: a field first holding 0 that later took a
 * fractional number would change its representation, and with it the object's hidden class (see
 * Ledger). Kinds are tallied from the records when the metrics are published, not per record.
 */
export interface InvocationMetrics {
  records: number;
  inserts: number;
  modifies: number;
  userDeletes: number;
  ttlDeletes: number;
  malformed: number;
  unrouted: number;
  /** Records reported in batchItemFailures' range: the first failed one and every one after it. */
  failed: number;
  deadLettered: number;
  ttlNeverExpires: number;
  retries: number;
  /** Exact duplicates dropped from a Kinesis batch (counted in `records`, handed to no sink). */
  duplicates: number;
  readonly routed: number[];
}

/** An object literal, not a class instance, for the reason given at Ledger. */
export function newInvocationMetrics(sinkCount: number): InvocationMetrics {
  return {
    records: 0,
    inserts: 0,
    modifies: 0,
    userDeletes: 0,
    ttlDeletes: 0,
    malformed: 0,
    unrouted: 0,
    failed: 0,
    deadLettered: 0,
    ttlNeverExpires: 0,
    retries: 0,
    duplicates: 0,
    routed: new Array<number>(sinkCount).fill(0),
  };
}
