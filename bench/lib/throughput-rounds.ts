/**
 * One timed round of the throughput work, shared by the suite (implementations sharing one
 * process) and bench/lib/throughput-worker.ts (one implementation alone in its process).
 */
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LambdaStreamEvent } from '../../src/records/types.js';
import type { BenchHandler, Collector, Workload } from '../peers/index.js';
import { resetCollector } from '../peers/index.js';
import { binaryHeavyBatches } from './binary-records.js';
import { generateBatches } from './events.js';
import { benchContext } from './lambda-context.js';
import { nowMs } from './stats.js';

/** The events of a workload: binary-heavy records for `binaries`, the seeded stream otherwise. */
export function workloadBatches(
  workload: Workload,
  seed: number,
  batchSize: number,
  count: number,
): LambdaStreamEvent[] {
  return workload === 'binaries'
    ? binaryHeavyBatches(seed, batchSize, count)
    : generateBatches(seed, batchSize, count);
}

export interface RoundRate {
  /** Records per second of CPU time (user + system) of this process, handler calls only. */
  cpu: number;
  /** Records per second of wall-clock time. */
  wall: number;
  /** Records per second of CPU time spent parsing the event and running the handler. */
  billed: number;
  /**
   * Milliseconds of main-thread garbage-collection pauses (PerformanceObserver `gc` entries)
   * that began inside this round's handler calls, per 1,000 records: scavenges, then the rest
   * (mark-compact, incremental marking steps, weak callbacks). V8's helper threads' share is not in it.
   */
  gcScavengeMs: number;
  gcOtherMs: number;
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
  const collections: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => collections.push(...list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  const windows: number[] = [];
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
    const from = performance.now();
    await handler(event, context);
    windows.push(from, performance.now());
    ms += nowMs() - started;
    const cpu = process.cpuUsage(cpu0);
    const billed = process.cpuUsage(parse0);
    cpuMicros += cpu.user + cpu.system;
    billedMicros += billed.user + billed.system;
    resetCollector(collector);
  }
  // The observer's entries arrive with a timer, not before: a setImmediate sees none of them.
  await sleep(1);
  observer.disconnect();
  const { scavenge, other } = gcInside(collections, windows);
  const cpuMs = cpuMicros / 1000;
  if (ms <= 0 || cpuMs <= 0) throw new Error(`${name}: non-positive round time`);
  return {
    cpu: (count / cpuMs) * 1000,
    wall: (count / ms) * 1000,
    billed: (count / billedMicros) * 1e6,
    gcScavengeMs: (scavenge * 1000) / count,
    gcOtherMs: (other * 1000) / count,
  };
}

/** Pause milliseconds of the collections that began inside one of the [from, to] windows. */
function gcInside(entries: readonly PerformanceEntry[], windows: readonly number[]) {
  let scavenge = 0;
  let other = 0;
  for (const entry of entries) {
    let inside = false;
    for (let i = 0; i < windows.length && !inside; i += 2)
      inside = entry.startTime >= (windows[i] as number) && entry.startTime <= (windows[i + 1] as number);
    if (!inside) continue;
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenge += entry.duration;
    else other += entry.duration;
  }
  return { scavenge, other };
}

/** global.gc, which bench processes get from --expose-gc. */
export function fullGc(): () => void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') throw new Error('global.gc is missing: run node with --expose-gc');
  return gc;
}
