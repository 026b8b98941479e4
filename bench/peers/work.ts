/**
 * The work every implementation does per invocation, defined once so the comparison is fair.
 * Two workloads (see Workload):
 *
 * 1. for each record: make Keys, NewImage and OldImage (those present) available as plain
 *    values, without failing on a 38-digit number — `materialize`: unmarshalled now, by everyone;
 *    `archive`: each implementation as its design does it (the peers must unmarshal to hand out
 *    values, tidewater's records unmarshal on first access and the archive never needs them);
 * 2. classify it as insert / modify / user-delete / TTL delete (REMOVE by the DynamoDB service
 *    principal);
 * 3. push `{ kind, sequenceNumber, keys, newImage, oldImage }` to an in-memory array;
 * 4. archive every TTL delete losslessly: one JSON line per record from the raw DynamoDB JSON,
 *    all lines of the invocation gzipped into one object kept in memory;
 * 5. return a Lambda partial-batch response.
 */
import type { RecordKind } from '../../src/records/types.js';

/**
 * - `archive`: issue 9's archive pipeline — parse, classify, route every record to an in-memory
 *   sink and TTL deletes to the NDJSON+gzip encoder. Nothing reads an image.
 * - `materialize`: the same, and every image is unmarshalled (read) by every implementation.
 * - `binaries`: `materialize` on binary-heavy images (bench/lib/binary-records.ts: 1–3 more
 *   binaries of 80–600 bytes per image), every binary decoded to bytes by every implementation
 *   (issue 37): the peers decode each B and BS member with `Buffer.from(text, 'base64')` before
 *   util-dynamodb unmarshalls the image, which keeps a Lambda-shaped B as its base64 string.
 */
export type Workload = 'archive' | 'materialize' | 'binaries';

export const WORKLOADS: readonly Workload[] = ['archive', 'materialize', 'binaries'];

export interface Processed {
  readonly kind: RecordKind;
  readonly sequenceNumber: string;
  readonly keys: unknown;
  readonly newImage: unknown;
  readonly oldImage: unknown;
}

/** Where a handler puts its output. The harness empties it between invocations. */
export interface Collector {
  items: Processed[];
  /** gzipped NDJSON archive objects. */
  objects: Uint8Array[];
}

export function newCollector(): Collector {
  return { items: [], objects: [] };
}

export function resetCollector(collector: Collector): void {
  collector.items.length = 0;
  collector.objects.length = 0;
}

export interface BatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

/** A Lambda handler as the harness calls it: (event, context) → partial-batch response. */
export type BenchHandler = (event: unknown, context: unknown) => Promise<BatchResponse | undefined>;

export const TTL_PRINCIPAL = 'dynamodb.amazonaws.com';

/** The TTL attribute of the synthetic table (bench/lib/events.ts). */
export const TTL_ATTRIBUTE = 'expiresAt';
