import { assert, describe, expect, it } from 'vitest';
import { defineOptions } from '../core/options.js';
import type { ClassifiedRecord } from '../records/types.js';
import { sampleTtlDeletes } from './sample-records.js';
import type { Sink, SinkResult } from './types.js';

type Awaitable<T> = T | Promise<T>;

/** Options of runSinkTestKit: a fresh sink per case, and how to read back what it stored. */
export interface SinkTestKitOptions<S extends Sink = Sink> {
  /** Names the describe block. */
  name: string;
  /** A fresh, empty sink for one test case. */
  create: () => Awaitable<S>;
  /**
   * What the sink durably holds, in the order a reader sees it (records or their sequence
   * numbers). Required: every case checks what was stored, not only what the sink reported.
   */
  read: (sink: S) => Awaitable<readonly (ClassifiedRecord | string)[]>;
  /**
   * Optional: make the sink fail to store these records on its next write (report them failed,
   * or throw). With it the kit adds a case for a partial failure followed by Lambda's redelivery.
   */
  injectFailures?: (sink: S, sequenceNumbers: ReadonlySet<string>) => Awaitable<void>;
  /** Size of the "large batch" case. Default 5,000. */
  largeBatch?: number;
  /** Cleanup after each case (close clients, remove buckets). `close()` of the sink is called first. */
  dispose?: (sink: S) => Awaitable<void>;
}

async function write(sink: Sink, batch: readonly ClassifiedRecord[]): Promise<SinkResult> {
  const result = await sink.write(batch, {});
  return result ?? {};
}

/**
 * A delivery as Lambda sees it: a `write` that throws fails every record of the batch (the
 * contract allows it), so Lambda redelivers all of them. Assertion errors are the kit's own.
 */
async function deliver(sink: Sink, batch: readonly ClassifiedRecord[]): Promise<SinkResult> {
  try {
    return await write(sink, batch);
  } catch (error) {
    if ((error as { name?: string } | undefined)?.name === 'AssertionError') throw error;
    return { failed: batch.map((r) => ({ sequenceNumber: r.sequenceNumber, error })) };
  }
}

function failedSequenceNumbers(result: SinkResult): string[] {
  return (result.failed ?? []).map((f) => f.sequenceNumber);
}

function sequenceNumbers(records: readonly ClassifiedRecord[]): string[] {
  return records.map((r) => r.sequenceNumber);
}

const readOptions = /* @__PURE__ */ defineOptions<SinkTestKitOptions>()('runSinkTestKit', {
  name: { kind: 'nonEmptyString', required: true },
  create: { kind: 'function', required: true },
  read: {
    kind: 'function',
    required: true,
    why: 'what the sink durably holds; without it a sink that stores nothing passes',
  },
  injectFailures: { kind: 'function' },
  largeBatch: { kind: 'integer', min: 1, max: 1_000_000, default: 5_000 },
  dispose: { kind: 'function' },
});

/** Sequence numbers in a message: the first ten, then how many more. */
function listed(items: readonly string[]): string {
  const shown = items.slice(0, 10).join(', ');
  return items.length > 10 ? `${shown}, … and ${items.length - 10} more` : shown;
}

/**
 * How what a sink holds differs from what it should hold, each problem with the sequence numbers
 * it concerns: a dropped record and a duplicated one are different bugs, so they get different
 * messages even when one delivery shows both. Order is judged only once the records are right.
 */
function storedRecordProblems(held: readonly string[], expected: readonly string[]): string[] {
  const wanted = new Set(expected);
  const counts = new Map<string, number>();
  for (const seq of held) counts.set(seq, (counts.get(seq) ?? 0) + 1);
  const missing = expected.filter((seq) => !counts.has(seq));
  const duplicated = [...counts].filter(([, n]) => n > 1).map(([seq, n]) => `${seq} (${n} times)`);
  const unexpected = [...counts.keys()].filter((seq) => !wanted.has(seq));
  const problems: string[] = [];
  if (missing.length > 0) {
    problems.push(
      `${missing.length} of ${expected.length} records missing: never reported failed, yet not stored (dropped): ${listed(missing)}`,
    );
  }
  if (duplicated.length > 0)
    problems.push(`${duplicated.length} records stored more than once (duplicates): ${listed(duplicated)}`);
  if (unexpected.length > 0)
    problems.push(`${unexpected.length} records stored that were never written: ${listed(unexpected)}`);
  if (problems.length === 0) {
    const at = held.findIndex((seq, i) => seq !== expected[i]);
    if (at >= 0)
      problems.push(
        `records out of stream order: position ${at} holds ${held[at]} where ${expected[at]} belongs`,
      );
  }
  return problems;
}

/** One case of the sink test kit: a title and its run. */
export interface SinkTestKitCase {
  title: string;
  run: () => Promise<void>;
}

/**
 * The kit's cases as plain functions (each throws on a contract violation), for running the kit
 * outside `describe` — e.g. to check that a broken sink fails it. Validates the options.
 */
export function sinkTestKitCases<S extends Sink>(options: SinkTestKitOptions<S>): SinkTestKitCase[] {
  const { largeBatch } = readOptions(options);
  const { create, read, dispose, injectFailures } = options;

  async function withSink(body: (sink: S) => Promise<void>): Promise<void> {
    const sink = await create();
    try {
      await body(sink);
    } finally {
      await sink.close?.();
      await dispose?.(sink);
    }
  }

  async function stored(sink: S): Promise<string[]> {
    const items = await read(sink);
    expect(Array.isArray(items), 'read() returns an array').toBe(true);
    return items.map((item) => {
      const seq = typeof item === 'string' ? item : item?.sequenceNumber;
      if (typeof seq !== 'string')
        assert.fail('read() returned an item that is neither a record nor a sequence number');
      return seq;
    });
  }

  /** What the sink holds must be exactly `expected`, once each, in order; `after` says what was done. */
  async function expectStored(sink: S, expected: readonly ClassifiedRecord[], after: string): Promise<void> {
    const problems = storedRecordProblems(await stored(sink), sequenceNumbers(expected));
    if (problems.length > 0) assert.fail(`after ${after}: ${problems.join('; ')}`);
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

  /** Lambda's rule: everything from the lowest failed record on is redelivered. */
  function redelivery(
    batch: readonly ClassifiedRecord[],
    failed: ReadonlySet<string>,
  ): readonly ClassifiedRecord[] {
    const lowest = batch.findIndex((r) => failed.has(r.sequenceNumber));
    return lowest < 0 ? [] : batch.slice(lowest);
  }

  /** Writes until nothing fails (a sink may fail transiently, or throw), as Lambda would by retrying. */
  async function writeAll(sink: S, batch: readonly ClassifiedRecord[]): Promise<void> {
    let pending = batch;
    let lastError: unknown;
    for (let attempt = 0; attempt < 5 && pending.length > 0; attempt++) {
      const result = await deliver(sink, pending);
      lastError = result.failed?.[0]?.error ?? lastError;
      pending = redelivery(pending, checkReport(pending, result));
    }
    const reason = lastError instanceof Error ? ` (last error: ${lastError.name}: ${lastError.message})` : '';
    expect(
      pending.map((r) => r.sequenceNumber),
      `records still failing after 5 deliveries${reason}`,
    ).toEqual([]);
  }

  /** Each delivery written until nothing fails (Lambda's retries), then flushed: the sink holds exactly `expected`. */
  async function storesAfter(
    sink: S,
    deliveries: readonly (readonly ClassifiedRecord[])[],
    expected: readonly ClassifiedRecord[],
    after: string,
  ): Promise<void> {
    for (const batch of deliveries) await writeAll(sink, batch);
    await sink.flush?.({});
    await expectStored(sink, expected, after);
  }

  const cases: SinkTestKitCase[] = [
    {
      title: 'accepts an empty batch and stores nothing',
      run: () =>
        withSink(async (sink) => {
          const result = await write(sink, []);
          expect(failedSequenceNumbers(result)).toEqual([]);
          await sink.flush?.({});
          expect(await stored(sink)).toEqual([]);
        }),
    },
    {
      title: 'stores every record once, in stream order',
      run: () =>
        withSink(async (sink) => {
          const batch = sampleTtlDeletes(50, { start: 100 });
          await storesAfter(sink, [batch], batch, 'one delivery');
        }),
    },
    {
      title: 'is idempotent when the same batch is delivered twice',
      run: () =>
        withSink(async (sink) => {
          const batch = sampleTtlDeletes(40, { start: 1_000 });
          await storesAfter(sink, [batch, batch], batch, 'the same batch was delivered twice');
        }),
    },
    {
      title: 'is idempotent when a redelivery is cut at a different point',
      run: () =>
        withSink(async (sink) => {
          const all = sampleTtlDeletes(60, { start: 2_000 });
          // First delivery, then Lambda retries from a failed record (index 17) with a bigger
          // batch, then once more from index 40 with a smaller one.
          const deliveries = [all.slice(0, 30), all.slice(17, 60), all.slice(40, 50)];
          await storesAfter(sink, deliveries, all, 'redeliveries cut at other points');
        }),
    },
    {
      title: 'reports failures only as records of the batch and drops nothing silently',
      run: () =>
        withSink(async (sink) => {
          const batch = sampleTtlDeletes(25, { start: 3_000 });
          const failed = checkReport(batch, await deliver(sink, batch));
          await sink.flush?.({});
          const held = new Set(await stored(sink));
          const dropped = sequenceNumbers(batch).filter((seq) => !held.has(seq) && !failed.has(seq));
          if (dropped.length > 0) {
            assert.fail(
              `${dropped.length} of ${batch.length} records neither stored nor reported failed (dropped): ${listed(dropped)}`,
            );
          }
        }),
    },
    {
      title: `stores a large batch (${largeBatch} records)`,
      run: () =>
        withSink(async (sink) => {
          const batch = sampleTtlDeletes(largeBatch, { start: 10_000 });
          await storesAfter(sink, [batch], batch, `a batch of ${largeBatch} records`);
        }),
    },
  ];

  if (injectFailures !== undefined) {
    cases.push({
      title: 'reports injected failures, then stores everything once after the redelivery',
      run: () =>
        withSink(async (sink) => {
          const batch = sampleTtlDeletes(30, { start: 20_000 });
          const chosen = new Set([batch[4], batch[11], batch[29]].map((r) => r?.sequenceNumber as string));
          await injectFailures(sink, chosen);
          // A throw counts as every record failed, which reports the injected ones too.
          const failed = checkReport(batch, await deliver(sink, batch));
          for (const seq of chosen)
            expect(failed.has(seq), `injected failure of ${seq} was not reported`).toBe(true);
          const again = redelivery(batch, failed);
          await storesAfter(sink, [again], batch, 'the redelivery from the lowest injected failure');
        }),
    });
  }
  return cases;
}

/**
 * Registers vitest cases that check a sink against the Sink contract: idempotency under
 * redelivery (the same batch again, and a redelivery cut at another point), per-record failure
 * reporting, the empty batch, a large batch, order, and (with `injectFailures`) a partial failure
 * followed by redelivery. Every case checks what `read` says the sink stored. Call it at the top
 * level of a test file.
 */
export function runSinkTestKit<S extends Sink>(options: SinkTestKitOptions<S>): void {
  const cases = sinkTestKitCases(options);
  describe(`sink test kit: ${options.name}`, () => {
    for (const c of cases) it(c.title, c.run);
  });
}
