import { shardSegment } from '../archive/format.js';
import { defineOptions } from '../core/options.js';
import type { ClassifiedRecord } from '../records/types.js';
import { InjectedSinkFailure } from './errors.js';
import type { Sink, SinkContext, SinkFailure, SinkResult } from './types.js';

/** Options of MemorySink: its name and an injected failure rule. */
export interface MemorySinkOptions<R extends ClassifiedRecord = ClassifiedRecord> {
  name?: string;
  /**
   * Decides, per record and delivery, whether to fail it (tests). Return `undefined`/`false` to
   * write it; `true` or an error to report it failed. `delivery` counts how often this sink has
   * seen the record (1 on first sight), so "fail twice, then succeed" is easy to express.
   */
  failWhen?: (record: R, delivery: number) => unknown;
}

const readOptions = /* @__PURE__ */ defineOptions<MemorySinkOptions>()('MemorySink', {
  name: { kind: 'nonEmptyString', default: 'memory' },
  failWhen: { kind: 'function' },
});

/**
 * Keeps written records in memory in sequence-number order, de-duplicated by shard, sequence
 * number and eventID (so redelivery never duplicates, and shards never merge). For tests and
 * local runs.
 */
export class MemorySink<R extends ClassifiedRecord = ClassifiedRecord> implements Sink<R> {
  readonly name: string;
  readonly #failWhen: ((record: R, delivery: number) => unknown) | undefined;
  readonly #records: R[] = [];
  readonly #seen = new Set<string>();
  readonly #deliveries = new Map<string, number>();
  #batches = 0;

  constructor(options?: MemorySinkOptions<R>) {
    const o = readOptions(options);
    this.name = o.name;
    this.#failWhen = o.failWhen as ((record: R, delivery: number) => unknown) | undefined;
  }

  /** Written records, in sequence-number order, each once. */
  get records(): readonly R[] {
    return this.#records;
  }

  /** How many write calls were made (empty ones included). */
  get batches(): number {
    return this.#batches;
  }

  clear(): void {
    this.#records.length = 0;
    this.#seen.clear();
    this.#deliveries.clear();
    this.#batches = 0;
  }

  /**
   * Keeps stream order even when a retry writes a record after later ones were written (Lambda
   * redelivers from the lowest failed record, so records after it may already be here).
   */
  #insert(record: R): void {
    const list = this.#records;
    const seq = BigInt(record.sequenceNumber);
    const last = list[list.length - 1];
    if (last === undefined || BigInt(last.sequenceNumber) < seq) {
      list.push(record);
      return;
    }
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (BigInt((list[mid] as R).sequenceNumber) < seq) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, record);
  }

  write(records: readonly R[], _context?: SinkContext): SinkResult {
    this.#batches++;
    const failed: SinkFailure[] = [];
    for (const record of records) {
      // Lambda events carry no shard id, so shards share the stand-in segment and sequence
      // numbers are only unique per shard: the eventID keeps two shards' records apart.
      const id = `${shardSegment(record)}/${record.sequenceNumber}/${record.eventID}`;
      if (this.#failWhen !== undefined) {
        const delivery = (this.#deliveries.get(id) ?? 0) + 1;
        this.#deliveries.set(id, delivery);
        const verdict = this.#failWhen(record, delivery);
        if (verdict !== undefined && verdict !== false && verdict !== null) {
          failed.push({
            sequenceNumber: record.sequenceNumber,
            error: verdict === true ? new InjectedSinkFailure(record.sequenceNumber) : verdict,
          });
          continue;
        }
      }
      if (this.#seen.has(id)) continue;
      this.#seen.add(id);
      this.#insert(record);
    }
    return failed.length === 0 ? {} : { failed };
  }
}
