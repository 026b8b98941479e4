import { describe, expect, it } from 'vitest';
import { processBatch } from '../../../src/pipeline/index.js';
import type { SinkContext } from '../../../src/sinks/types.js';
import { batch, captureLogger, fakeContext, quiet, RecordingSink, seq } from './fixtures.js';

describe('deadline', () => {
  it('stops starting work below the margin and reports from the first unstarted record', async () => {
    const first = new RecordingSink('first');
    const second = new RecordingSink('second');
    // 3000 ms left, every read costs 1000 ms: the constructor reads once, sink "first" starts at
    // 2000 (> margin 1500), sink "second" would start at 1000 (< margin).
    const context = fakeContext(3000, 1000);
    const response = await processBatch(
      batch(6, (i) => ({ kind: i < 3 ? 'insert' : 'modify' })),
      {
        ...quiet,
        deadlineMarginMs: 1500,
        routes: [
          { when: 'insert', to: first },
          { when: 'modify', to: second },
        ],
      },
      context,
    );
    expect(first.calls).toEqual([[seq(0), seq(1), seq(2)]]);
    expect(second.calls).toEqual([]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(3) }]);
  });

  it('reports the whole batch when there is no time to start at all', async () => {
    const sink = new RecordingSink('s');
    const response = await processBatch(
      batch(3),
      { ...quiet, routes: [{ when: 'insert', to: sink }] },
      fakeContext(500),
    );
    expect(sink.calls).toEqual([]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(0) }]);
  });

  it('interrupts retries when the deadline comes: pending records are reported, not dead-lettered', async () => {
    const dlq: unknown[] = [];
    const sink = new RecordingSink('s', (s) => s === seq(1));
    const context = fakeContext(10_000, 4000);
    const response = await processBatch(
      batch(3),
      {
        ...quiet,
        retry: { attempts: 5, baseDelayMs: 0, maxDelayMs: 0 },
        deadLetter: { name: 'dlq', send: async (entries) => void dlq.push(...entries) },
        routes: [{ when: 'insert', to: sink }],
      },
      context,
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(1) }]);
    expect(dlq).toEqual([]);
  });

  it('gives sinks an AbortSignal that aborts at the deadline', async () => {
    let signal: AbortSignal | undefined;
    const slow = new RecordingSink(
      'slow',
      () => false,
      async (_records, context) => {
        signal = context.signal;
        await new Promise<void>((resolve) =>
          context.signal?.addEventListener('abort', () => resolve(), { once: true }),
        );
      },
    );
    const context = { getRemainingTimeInMillis: () => 1020 };
    await processBatch(
      batch(1),
      { ...quiet, deadlineMarginMs: 1000, routes: [{ when: 'insert', to: slow }] },
      context,
    );
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toMatchObject({ name: 'DeadlineReachedError' });
  });

  it('gives a signal already aborted to a sink that first asks for it after the deadline', async () => {
    let aborted: boolean | undefined;
    const late = new RecordingSink(
      'late',
      () => false,
      async (_records, context) => {
        // 20 ms were left when the batch started; the signal is taken 60 ms later.
        await new Promise((resolve) => setTimeout(resolve, 60));
        aborted = context.signal?.aborted;
      },
    );
    await processBatch(
      batch(1),
      { ...quiet, deadlineMarginMs: 1000, routes: [{ when: 'insert', to: late }] },
      { getRemainingTimeInMillis: () => 1020 },
    );
    expect(aborted).toBe(true);
  });

  it("gives sinks the time left before the margin and the invocation's logger, even taken off the context", async () => {
    const { logger, lines } = captureLogger();
    let seen: { left: number; detached: number } | undefined;
    const sink = {
      name: 'reads-context',
      write(_records: unknown, context: SinkContext) {
        const { remainingTimeMs } = context;
        seen = { left: context.remainingTimeMs!(), detached: remainingTimeMs!() };
        context.logger!.info({ from: 'sink' }, 'hello');
        return undefined;
      },
    };
    await processBatch(
      batch(1),
      { ...quiet, logger, deadlineMarginMs: 1000, routes: [{ when: 'insert', to: sink }] },
      fakeContext(60_000),
    );
    expect(seen).toEqual({ left: 59_000, detached: 59_000 });
    expect(lines.find((l) => l.msg === 'hello')).toMatchObject({
      from: 'sink',
      requestId: 'req-1',
      firstSequenceNumber: seq(0),
    });
  });

  it('in per-key mode, reports the first record of the first key that could not start', async () => {
    const sink = new RecordingSink('s');
    // Reads: 3000 at start, 2000 when key k0 starts (runs), 1000 when key k1 would start (stops).
    const response = await processBatch(
      batch(12, (i) => ({ pk: `k${i % 4}` })),
      {
        ...quiet,
        deadlineMarginMs: 1500,
        ordering: { mode: 'per-key', concurrency: 1 },
        routes: [{ when: 'insert', to: sink }],
      },
      fakeContext(3000, 1000),
    );
    expect(sink.calls).toEqual([[seq(0), seq(4), seq(8)]]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(1) }]);
  });
});
