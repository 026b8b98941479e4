import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  backoffDelay,
  RETRY_POLICIES,
  type RetryPolicy,
  waitBeforeRetry,
  withAttempts,
} from '../../../src/core/backoff.js';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('backoffDelay (the one schedule)', () => {
  it("is p-retry's formula: min(round((1 + random) × base × 2^(r−1)), max)", () => {
    const policy: RetryPolicy = { attempts: 5, baseDelayMs: 100, maxDelayMs: 250 };
    expect(backoffDelay(policy, 1, 0)).toBe(100);
    expect(backoffDelay(policy, 1, 0.5)).toBe(150);
    expect(backoffDelay(policy, 2, 0.1)).toBe(220);
    expect(backoffDelay(policy, 2, 0.5)).toBe(250);
    expect(backoffDelay(policy, 3, 0)).toBe(250);
  });

  it('stays within [base × 2^(r−1), 2 × base × 2^(r−1)] and under the cap, for every policy', () => {
    const named = Object.values(RETRY_POLICIES) as RetryPolicy[];
    fc.assert(
      fc.property(
        fc.constantFrom(...named),
        fc.integer({ min: 1, max: 12 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (policy, retry, random) => {
          const delay = backoffDelay(policy, retry, random);
          const floor = policy.baseDelayMs * 2 ** (retry - 1);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeLessThanOrEqual(policy.maxDelayMs);
          expect(delay).toBeLessThanOrEqual(Math.round(2 * floor));
          expect(delay).toBeGreaterThanOrEqual(Math.min(Math.round(floor), policy.maxDelayMs));
        },
      ),
    );
  });

  it('uses Math.random when no random is given', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.25);
    expect(backoffDelay(RETRY_POLICIES.voteRequest, 3)).toBe(100);
  });
});

describe('RETRY_POLICIES', () => {
  it('names every kind of work that retries, each a sane policy', () => {
    expect(Object.keys(RETRY_POLICIES).sort()).toEqual([
      'archiveConflict',
      'deadLetterSend',
      'restoreBatch',
      'sinkRequest',
      'sinkWrite',
      'voteRequest',
    ]);
    for (const policy of Object.values(RETRY_POLICIES) as RetryPolicy[]) {
      expect(Number.isInteger(policy.attempts) && policy.attempts >= 1).toBe(true);
      expect(policy.baseDelayMs).toBeGreaterThan(0);
      expect(policy.maxDelayMs).toBeGreaterThanOrEqual(policy.baseDelayMs);
    }
  });

  it('withAttempts changes the count only', () => {
    expect(withAttempts(RETRY_POLICIES.restoreBatch, 2)).toEqual({
      ...RETRY_POLICIES.restoreBatch,
      attempts: 2,
    });
  });
});

describe('waitBeforeRetry', () => {
  it('waits exactly backoffDelay before resolving', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const policy: RetryPolicy = { attempts: 3, baseDelayMs: 40, maxDelayMs: 1_000 };
    let done = false;
    const waiting = waitBeforeRetry(policy, 2, undefined).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(119);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waiting;
    expect(done).toBe(true);
  });

  it("ends the wait with the signal's reason when it aborts, before or during the wait", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const policy: RetryPolicy = { attempts: 3, baseDelayMs: 60_000, maxDelayMs: 60_000 };
    const controller = new AbortController();
    const reason = new Error('deadline');
    const waiting = waitBeforeRetry(policy, 1, controller.signal);
    await vi.advanceTimersByTimeAsync(10);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
    await expect(waitBeforeRetry(policy, 1, controller.signal)).rejects.toBe(reason);
  });
});
