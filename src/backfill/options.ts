import { defineOptions } from '../core/options.js';
import { DEFAULT_MAX_INFLATE_RATIO } from './limits.js';

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

/** How an export's data files are read. */
export interface ExportReadOptions {
  /**
   * How many times its compressed size a data file may inflate to before it is refused as a
   * decompression bomb (ExportFileInflationError), checked past its first 16 MiB. Default 250:
   * DynamoDB JSON compresses 5–20 times; raise it only for items of one repeated character.
   */
  maxInflateRatio?: number;
}

export const EXPORT_READ_OPTIONS = {
  // gzip's own limit is about 1032: a bound above it bounds nothing.
  maxInflateRatio: { kind: 'integer', min: 2, max: 1100, default: DEFAULT_MAX_INFLATE_RATIO },
} as const;
