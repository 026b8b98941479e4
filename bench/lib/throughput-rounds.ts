/**
 * One timed round of the throughput work, shared by the suite (implementations sharing one
 * process) and bench/lib/throughput-worker.ts (one implementation alone in its process).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchHandler, Collector } from '../peers/index.js';
import { resetCollector } from '../peers/index.js';
import { benchContext } from './lambda-context.js';
import { nowMs } from './stats.js';

export interface RoundRate {
  /** Records per second of CPU time (user + system) of this process, handler calls only. */
  cpu: number;
  /** Records per second of wall-clock time. */
  wall: number;
  /** Records per second of CPU time spent parsing the event and running the handler. */
  billed: number;
}

export interface RoundOptions {
  /** A full collection (global.gc) before each event is parsed: between invocations, untimed. */
  gcBetween?: boolean;
}

/**
 * How long to wait after a forced collection before the next invocation. `gc()` returns when the
 * collection's main-thread part is done; V8 sweeps the freed pages on background threads
 * afterwards, and process CPU time (all threads) would charge that sweeping to the next handler
 * call — measured at several ms per call, for every implementation alike. The pause lets it end
 * outside the timed window.
 */
export const SETTLE_AFTER_GC_MS = 20;

/**
 * One round: every event parsed from JSON just before its invocation (a fresh copy, as Lambda's
 * runtime hands each invocation; middy's normalizer also rewrites it in place) and only the
 * handler call timed, so each implementation is charged for its own work and for collecting its
 * own garbage. With `gcBetween`, a full collection runs after each invocation, before the next
 * event arrives: what a long-lived Lambda process meets now and then, and what frees the previous
 * event, so code optimized against it must cope with fresh objects.
 */
export async function timeRound(
  name: string,
  handler: BenchHandler,
  collector: Collector,
  json: readonly string[],
  count: number,
  options: RoundOptions = {},
): Promise<RoundRate> {
  const context = benchContext();
  const gc = options.gcBetween === true ? fullGc() : undefined;
  let cpuMicros = 0;
  let billedMicros = 0;
  let ms = 0;
  for (const text of json) {
    if (gc !== undefined) {
      gc();
      await sleep(SETTLE_AFTER_GC_MS);
    }
    const parse0 = process.cpuUsage();
    const event = JSON.parse(text) as unknown;
    const cpu0 = process.cpuUsage();
    const started = nowMs();
    await handler(event, context);
    ms += nowMs() - started;
    const cpu = process.cpuUsage(cpu0);
    const billed = process.cpuUsage(parse0);
    cpuMicros += cpu.user + cpu.system;
    billedMicros += billed.user + billed.system;
    resetCollector(collector);
  }
  const cpuMs = cpuMicros / 1000;
  if (ms <= 0 || cpuMs <= 0) throw new Error(`${name}: non-positive round time`);
  return { cpu: (count / cpuMs) * 1000, wall: (count / ms) * 1000, billed: (count / billedMicros) * 1e6 };
}

/** global.gc, which bench processes get from --expose-gc. */
export function fullGc(): () => void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') throw new Error('global.gc is missing: run node with --expose-gc');
  return gc;
}
