import { defineOptions } from '../core/options.js';

/** What every backfill source shares: how items are batched into the pipeline and retried. */
export interface DeliveryOptions {
  /** Records per pipeline batch (one `process` call, as one Lambda invocation). Default 100. */
  batchSize?: number;
  /**
   * Times a batch is sent in all before the run stops at its first failing record (resumably:
   * the checkpoint holds what is done), the lowest failed record and those after it sent again
   * each time, as Lambda does. Default 3.
   */
  attempts?: number;
}

export const DELIVERY_OPTIONS = {
  batchSize: { kind: 'integer', min: 1, max: 10_000, default: 100 },
  attempts: { kind: 'integer', min: 1, max: 100, default: 3 },
} as const;

export const readDelivery = /* @__PURE__ */ defineOptions<DeliveryOptions>()('backfill', DELIVERY_OPTIONS);
