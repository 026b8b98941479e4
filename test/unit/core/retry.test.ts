import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay, type RetryPolicy } from '../../../src/core/backoff.js';
import { PartialFailureError } from '../../../src/core/errors.js';
import { withRetry } from '../../../src/core/retry.js';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const quick: RetryPolicy = { attempts: 4, baseDelayMs: 0, maxDelayMs: 0 };
const partial = (error: unknown) => error instanceof PartialFailureError;

describe('withRetry', () => {
  it('retries what the rule calls retryable until it succeeds, telling onRetry each time', async () => {
    const seen: [string, number][] = [];
    let calls = 0;
    const result = await withRetry(
      async (attempt) => {
        calls++;
        if (attempt < 3) throw new PartialFailureError(3 - attempt);
        return 'done';
      },
      {
        policy: quick,
        retryable: partial,
        onRetry: (error, retry) => seen.push([(error as Error).message, retry]),
      },
    );
    expect(result).toBe('done');
    expect(calls).toBe(3);
    expect(seen).toEqual([
      ['2 item(s) left unprocessed', 1],
      ['1 item(s) left unprocessed', 2],
    ]);
  });

  it('rethrows an error the rule refuses at once, whichever attempt it came on', async () => {
    const condition = Object.assign(new Error('the condition failed'), {
      name: 'ConditionalCheckFailedException',
    });
    let calls = 0;
    const exhausted = vi.fn();
    await expect(
      withRetry(
        async () => {
          calls++;
          if (calls === 1) throw new PartialFailureError(1);
          throw condition;
        },
        { policy: quick, retryable: partial, onExhausted: exhausted },
      ),
    ).rejects.toBe(condition);
    expect(calls).toBe(2);
    expect(exhausted).not.toHaveBeenCalled();
  });

  it("gives up after the policy's attempts, with the module's own error when it gives one", async () => {
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new PartialFailureError(1);
    };
    await expect(withRetry(failing, { policy: quick, retryable: partial })).rejects.toBeInstanceOf(
      PartialFailureError,
    );
    expect(calls).toBe(4);
    calls = 0;
    await expect(
      withRetry(failing, {
        policy: { ...quick, attempts: 2 },
        retryable: partial,
        onExhausted: (error, attempts) => new Error(`gave up after ${attempts}`, { cause: error }),
      }),
    ).rejects.toThrow('gave up after 2');
    expect(calls).toBe(2);
  });

  it('waits the shared schedule between attempts (what backoffDelay says)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const policy: RetryPolicy = { attempts: 3, baseDelayMs: 100, maxDelayMs: 250 };
    let calls = 0;
    const run = withRetry(
      async () => {
        calls++;
        if (calls < 3) throw new PartialFailureError(1);
        return calls;
      },
      { policy, retryable: partial },
    );
    await vi.advanceTimersByTimeAsync(backoffDelay(policy, 1, 0.5) - 1);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(backoffDelay(policy, 2, 0.5) - 1);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    await expect(run).resolves.toBe(3);
  });

  it("ends a wait with the signal's reason", async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const run = withRetry(
      async () => {
        setTimeout(() => controller.abort(reason), 5);
        throw new PartialFailureError(1);
      },
      {
        policy: { attempts: 3, baseDelayMs: 60_000, maxDelayMs: 60_000 },
        retryable: partial,
        signal: controller.signal,
      },
    );
    await expect(run).rejects.toBe(reason);
  });
});
