/** BatchGetItem reads at most 100 keys per call (reference 003). */
export const BATCH_GET_LIMIT = 100;

/**
 * Slot g of the flat key list is contestant floor(g / (S + 1)), item g mod (S + 1): items 0..S-1
 * are shards, item S the total. Packing every contestant's S + 1 keys back to back into calls of
 * 100 gives the minimum ceil(C·(S+1)/100) BatchGetItem calls; a contestant may straddle two.
 */
export interface BatchPlan {
  readonly contestants: number;
  readonly itemsPerContestant: number;
  readonly batches: number;
  /** Slots [start, end) of batch b. */
  range(batch: number): [start: number, end: number];
}

export function planBatches(contestants: number, shards: number, limit = BATCH_GET_LIMIT): BatchPlan {
  const itemsPerContestant = shards + 1;
  const slots = contestants * itemsPerContestant;
  return {
    contestants,
    itemsPerContestant,
    batches: Math.ceil(slots / limit),
    range: (batch) => [batch * limit, Math.min(slots, (batch + 1) * limit)],
  };
}
