import { afterEach, describe, expect, it, vi } from 'vitest';
import { processBatch } from '../../../src/pipeline/index.js';
import { batch, quiet, RecordingDeadLetter, RecordingSink, seq } from './fixtures.js';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('retry backoff', () => {
  it('waits base × 2^(retry−1) × (1 + random) before each retry, rounded and capped at maxDelayMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const sink = new RecordingSink('s', (s) => s === seq(1));
    const dlq = new RecordingDeadLetter();
    const done = processBatch(batch(3), {
      ...quiet,
      retry: { attempts: 3, baseDelayMs: 100, maxDelayMs: 250 },
      deadLetter: dlq,
      routes: [{ when: 'insert', to: sink }],
    });
    // First backoff: round(1.5 × 100) = 150 ms.
    await vi.advanceTimersByTimeAsync(149);
    expect(sink.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sink.calls).toEqual([[seq(0), seq(1), seq(2)], [seq(1)]]);
    // Second: round(1.5 × 100 × 2) = 300, capped at 250.
    await vi.advanceTimersByTimeAsync(249);
    expect(sink.calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(sink.calls).toHaveLength(3);
    expect(await done).toEqual({ batchItemFailures: [] });
    expect(dlq.entries.map((e) => [e.sequenceNumber, e.reason, e.attempts])).toEqual([
      [seq(1), 'retries-exhausted', 3],
    ]);
  });

  it('cuts a backoff short at the deadline and reports the pending records instead of dead-lettering them', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const sink = new RecordingSink('s', (s) => s === seq(1));
    const dlq = new RecordingDeadLetter();
    const started = performance.now();
    // 1 s before the margin when the batch starts, by the (fake) clock.
    const context = { getRemainingTimeInMillis: () => 2000 - (performance.now() - started) };
    const done = processBatch(
      batch(3),
      {
        ...quiet,
        deadlineMarginMs: 1000,
        retry: { attempts: 3, baseDelayMs: 60_000, maxDelayMs: 60_000 },
        deadLetter: dlq,
        routes: [{ when: 'insert', to: sink }],
      },
      context,
    );
    await vi.advanceTimersByTimeAsync(1000);
    expect(await done).toEqual({ batchItemFailures: [{ itemIdentifier: seq(1) }] });
    expect(sink.calls).toHaveLength(1);
    expect(dlq.entries).toEqual([]);
  });
});
