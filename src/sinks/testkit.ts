import { describe, expect, it } from 'vitest';
import type { ClassifiedRecord } from '../records/types.js';
import { sampleTtlDeletes } from './sample-records.js';
import type { Sink, SinkResult } from './types.js';

type Awaitable<T> = T | Promise<T>;

export interface SinkTestKitOptions<S extends Sink = Sink> {
  /** Names the describe block. */
  name: string;
  /** A fresh, empty sink for one test case. */
  create: () => Awaitable<S>;
  /**
   * What the sink durably holds, in the order a reader sees it (records or their sequence
   * numbers). Without it the kit checks only what a sink reports, not what it stored.
   */
  read?: (sink: S) => Awaitable<readonly (ClassifiedRecord | string)[]>;
  /** Size of the "large batch" case. Default 5,000. */
  largeBatch?: number;
  /** Cleanup after each case (close clients, remove buckets). `close()` of the sink is called first. */
  dispose?: (sink: S) => Awaitable<void>;
}

async function write(sink: Sink, batch: readonly ClassifiedRecord[]): Promise<SinkResult> {
  const result = await sink.write(batch, {});
  return result ?? {};
}

function failedSequenceNumbers(result: SinkResult): string[] {
  return (result.failed ?? []).map((f) => f.sequenceNumber);
}

/**
 * Registers vitest cases that check a sink against the Sink contract: idempotency under
 * redelivery (the same batch again, and a redelivery cut at another point), per-record failure
 * reporting, the empty batch, a large batch, and order. Call it at the top level of a test file.
 */
export function runSinkTestKit<S extends Sink>(options: SinkTestKitOptions<S>): void {
  const { name, create, read, dispose } = options;
  const largeBatch = options.largeBatch ?? 5_000;

  async function withSink(body: (sink: S) => Promise<void>): Promise<void> {
    const sink = await create();
    try {
      await body(sink);
    } finally {
      await sink.close?.();
      await dispose?.(sink);
    }
  }

  async function stored(sink: S): Promise<string[] | undefined> {
    if (read === undefined) return undefined;
    const items = await read(sink);
    return items.map((item) => (typeof item === 'string' ? item : item.sequenceNumber));
  }

  /** Every record of the batch is either stored or reported failed, and failures are records of the batch. */
  function checkReport(batch: readonly ClassifiedRecord[], result: SinkResult): Set<string> {
    const inBatch = new Set(batch.map((r) => r.sequenceNumber));
    const failed = failedSequenceNumbers(result);
    for (const seq of failed)
      expect(inBatch.has(seq), `failed sequence number ${seq} is not in the batch`).toBe(true);
    expect(new Set(failed).size, 'a record is reported failed twice').toBe(failed.length);
    for (const failure of result.failed ?? [])
      expect(failure.error, 'a failure carries its error').toBeDefined();
    return new Set(failed);
  }

  /** Writes until nothing fails (a sink may fail transiently), as Lambda would by retrying. */
  async function writeAll(sink: S, batch: readonly ClassifiedRecord[]): Promise<void> {
    let pending = batch;
    for (let attempt = 0; attempt < 5 && pending.length > 0; attempt++) {
      const failed = checkReport(pending, await write(sink, pending));
      // Lambda's rule: everything from the lowest failed record on is redelivered.
      const lowest = pending.findIndex((r) => failed.has(r.sequenceNumber));
      pending = lowest < 0 ? [] : pending.slice(lowest);
    }
    expect(
      pending.map((r) => r.sequenceNumber),
      'records still failing after 5 deliveries',
    ).toEqual([]);
  }

  describe(`sink test kit: ${name}`, () => {
    it('accepts an empty batch and stores nothing', async () => {
      await withSink(async (sink) => {
        const result = await write(sink, []);
        expect(failedSequenceNumbers(result)).toEqual([]);
        await sink.flush?.({});
        const held = await stored(sink);
        if (held !== undefined) expect(held).toEqual([]);
      });
    });

    it('stores every record once, in stream order', async () => {
      await withSink(async (sink) => {
        const batch = sampleTtlDeletes(50, { start: 100 });
        await writeAll(sink, batch);
        await sink.flush?.({});
        const held = await stored(sink);
        if (held !== undefined) expect(held).toEqual(batch.map((r) => r.sequenceNumber));
      });
    });

    it('is idempotent when the same batch is delivered twice', async () => {
      await withSink(async (sink) => {
        const batch = sampleTtlDeletes(40, { start: 1_000 });
        await writeAll(sink, batch);
        await writeAll(sink, batch);
        await sink.flush?.({});
        const held = await stored(sink);
        if (held !== undefined) expect(held).toEqual(batch.map((r) => r.sequenceNumber));
      });
    });

    it('is idempotent when a redelivery is cut at a different point', async () => {
      await withSink(async (sink) => {
        const all = sampleTtlDeletes(60, { start: 2_000 });
        // First delivery, then Lambda retries from a failed record (index 17) with a bigger
        // batch, then once more from index 40 with a smaller one.
        await writeAll(sink, all.slice(0, 30));
        await writeAll(sink, all.slice(17, 60));
        await writeAll(sink, all.slice(40, 50));
        await sink.flush?.({});
        const held = await stored(sink);
        if (held !== undefined) {
          expect(new Set(held).size, 'duplicates after redelivery').toBe(held.length);
          expect(held).toEqual(all.map((r) => r.sequenceNumber));
        }
      });
    });

    it('reports failures only as records of the batch and drops nothing silently', async () => {
      await withSink(async (sink) => {
        const batch = sampleTtlDeletes(25, { start: 3_000 });
        const failed = checkReport(batch, await write(sink, batch));
        await sink.flush?.({});
        const held = await stored(sink);
        if (held !== undefined) {
          const heldSet = new Set(held);
          for (const record of batch) {
            expect(
              heldSet.has(record.sequenceNumber) || failed.has(record.sequenceNumber),
              `record ${record.sequenceNumber} was neither stored nor reported failed`,
            ).toBe(true);
          }
        }
      });
    });

    it(`stores a large batch (${largeBatch} records)`, async () => {
      await withSink(async (sink) => {
        const batch = sampleTtlDeletes(largeBatch, { start: 10_000 });
        await writeAll(sink, batch);
        await sink.flush?.({});
        const held = await stored(sink);
        if (held !== undefined) expect(held).toEqual(batch.map((r) => r.sequenceNumber));
      });
    });
  });
}
