import type { ClassifiedRecord } from '../records/types.js';

// Its own module so the Kinesis stages (kinesis-order, kinesis-source) name what the read stage
// hands them without importing the route stage, which reaches the compiled config.

/** A batch's records parsed, and why parsing failed where it did (undefined when it never did). */
export interface ReadBatch {
  readonly records: (ClassifiedRecord | undefined)[];
  readonly errors: unknown[] | undefined;
}
