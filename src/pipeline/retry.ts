import { waitBeforeRetry } from '../core/backoff.js';
import { DeadlineReachedError } from './errors.js';
import {
  deadline,
  giveUp,
  isPoison,
  type Ledger,
  loggerOf,
  malformed,
  outOfTime,
  seq,
  signalOf,
} from './ledger.js';
import type { CompiledConfig } from './plan.js';

/** Records (by batch index) that failed in one attempt, with their errors, in the order reported. */
export type Failures = Map<number, unknown>;

/**
 * The pipeline's one retry point, entered only after something failed: bounded in-process retries
 * of the failed records only. Before retry r (1, 2, …) it waits by the shared schedule of
 * core/backoff (RETRY_POLICIES.sinkWrite with the `retry` option's values): p-retry's formula,
 * run by this loop so that a handler bundle whose batches never fail does not carry p-retry
 * (3.8 KB minified). Non-retryable and too-old records are given
 * up at once; after the last attempt the rest are given up (dead-lettered). The deadline
 * interrupts the backoff: what is still pending then is reported as failed, not dead-lettered,
 * because it was never given its attempts.
 */
export async function retryFailures(
  ledger: Ledger,
  config: CompiledConfig,
  label: string,
  first: Failures,
  again: (pending: number[]) => Promise<Failures | undefined>,
): Promise<void> {
  const lastError = new Map<number, unknown>();
  let attempt = 1;
  let pending = sortOut(ledger, config, first, attempt, label, lastError);
  if (pending.length === 0) return;
  const { attempts } = config.retry;
  if (attempts > 1) {
    const signal = signalOf(ledger);
    try {
      for (let n = 2; n <= attempts && pending.length > 0; n++) {
        await waitBeforeRetry(config.retry, n - 1, signal);
        if (outOfTime(ledger))
          throw new DeadlineReachedError(seq(ledger, pending[0]!), config.deadlineMarginMs);
        attempt = n;
        ledger.metrics.retries += pending.length;
        const failures = await again(pending);
        pending = failures === undefined ? [] : sortOut(ledger, config, failures, n, label, lastError);
      }
    } catch (error) {
      // The signal's reason when the deadline cut the backoff.
      if (error instanceof DeadlineReachedError) return deadline(ledger, pending[0]!);
      throw error;
    }
  }
  for (const i of pending) giveUp(ledger, i, 'retries-exhausted', lastError.get(i), attempt, label);
}

/** Splits an attempt's failures: records worth another attempt (returned, in stream order) and records given up. */
function sortOut(
  ledger: Ledger,
  config: CompiledConfig,
  failures: Failures,
  attempt: number,
  label: string,
  lastError: Map<number, unknown>,
): number[] {
  const pending: number[] = [];
  const now = config.clock();
  for (const [i, error] of failures) {
    if (isPoison(ledger, error, i)) {
      malformed(ledger, i, error, label, attempt);
      continue;
    }
    lastError.set(i, error);
    loggerOf(ledger).debug(
      { err: error, sequenceNumber: seq(ledger, i), attempt, sink: label },
      'record failed',
    );
    if (config.retryable !== undefined && !config.retryable(error)) {
      giveUp(ledger, i, 'retries-exhausted', error, attempt, label);
      continue;
    }
    const created = ledger.records[i]?.approximateCreationTime;
    if (created !== undefined && now - created * 1000 > config.maxRecordAgeMs) {
      giveUp(ledger, i, 'record-too-old', error, attempt, label);
      continue;
    }
    pending.push(i);
  }
  return pending.sort((a, b) => a - b);
}
