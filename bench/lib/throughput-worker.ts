/**
 * The throughput suite's processes of their own (spawned by bench/suites/throughput.ts):
 *
 * - `rates <spec>`: one implementation alone in a fresh process. Warm-up rounds, then measured
 *   rounds as the suite times them, then rounds with a full GC between invocations (global.gc,
 *   untimed), so the change in the implementation's own rate is measured in one process. Prints
 *   `{ alone: RoundRate[], gc: RoundRate[] }`.
 * - `shared <spec>`: the suite's shared method in a process of its own, for any subset of the
 *   implementations (which one's presence slows which) and with V8 flags (`--trace-deopt`,
 *   `--trace-gc`, `--cpu-prof`) that the suite's process does not take. Prints, per
 *   implementation, the medians of its rounds: `{ [peer]: { cpu, billed, gcScavengeMs, gcOtherMs } }`.
 * - `heap <spec>`: heap allocated per invocation, every implementation of a workload in turn.
 *   The process runs with a fixed 256 MiB young generation (--min/--max-semi-space-size), so no
 *   scavenge runs inside one invocation: after a full GC, the growth of the used heap across the
 *   invocation is everything it allocated (kept or garbage). A sample during which any collection
 *   ran anyway is discarded. Prints `{ [peer]: { heapBytes, externalBytes, samples } }`.
 *
 * Like the suite processes, tidewater comes from dist/.
 */
import { register } from 'node:module';
import { PerformanceObserver } from 'node:perf_hooks';

if (process.env.TIDEWATER_BENCH_SOURCE !== 'src') register('./use-dist.mjs', import.meta.url);
const { benchContext } = await import('./lambda-context.js');
const { median, rotate } = await import('./stats.js');
const { fullGc, timeRound, workloadBatches } = await import('./throughput-rounds.js');
const { newCollector, PEERS, resetCollector, VARIANTS } = await import('../peers/index.js');
type Workload = import('../peers/index.js').Workload;
type RoundRate = import('./throughput-rounds.js').RoundRate;

export interface RatesSpec {
  peer: string;
  workload: Workload;
  batchSize: number;
  seed: number;
  recordsPerRound: number;
  warmupRounds: number;
  rounds: number;
  /** Rounds with a full GC between invocations, after the measured ones. */
  gcRounds: number;
}

/** RatesSpec's rounds, for several implementations sharing one process. */
export type SharedSpec = Omit<RatesSpec, 'peer' | 'gcRounds'> & { peers: string[] };

export interface HeapSpec {
  peers: string[];
  workload: Workload;
  batchSize: number;
  seed: number;
  warmupInvocations: number;
  samples: number;
}

export interface HeapResult {
  /** Median bytes of JS heap allocated by one invocation. */
  heapBytes: number;
  /** Median growth of memory outside the JS heap (ArrayBuffers, Buffers) over one invocation. */
  externalBytes: number;
  samples: number;
}

const ALL = [...PEERS, ...VARIANTS];

function peerById(id: string) {
  const peer = ALL.find((p) => p.id === id);
  if (peer === undefined) throw new Error(`throughput-worker: no implementation ${id}`);
  return peer;
}

async function rates(spec: RatesSpec): Promise<{ alone: RoundRate[]; gc: RoundRate[] }> {
  const peer = peerById(spec.peer);
  const batches = Math.max(1, Math.round(spec.recordsPerRound / spec.batchSize));
  const json = workloadBatches(spec.workload, spec.seed, spec.batchSize, batches).map((b) =>
    JSON.stringify(b),
  );
  const count = batches * spec.batchSize;
  const collector = newCollector();
  const handler = peer.create(collector, spec.workload);
  for (let i = 0; i < spec.warmupRounds; i++) await timeRound(peer.name, handler, collector, json, count);
  const alone: RoundRate[] = [];
  for (let i = 0; i < spec.rounds; i++)
    alone.push(await timeRound(peer.name, handler, collector, json, count));
  const gc: RoundRate[] = [];
  for (let i = 0; i < spec.gcRounds; i++) {
    gc.push(await timeRound(peer.name, handler, collector, json, count, { gcBetween: true }));
  }
  return { alone, gc };
}

async function shared(spec: SharedSpec): Promise<Record<string, Record<keyof RoundRate, number>>> {
  const batches = Math.max(1, Math.round(spec.recordsPerRound / spec.batchSize));
  const json = workloadBatches(spec.workload, spec.seed, spec.batchSize, batches).map((b) =>
    JSON.stringify(b),
  );
  const count = batches * spec.batchSize;
  const handlers = spec.peers.map((id) => {
    const peer = peerById(id);
    const collector = newCollector();
    return { peer, collector, handler: peer.create(collector, spec.workload), rounds: [] as RoundRate[] };
  });
  for (let round = 0; round < spec.warmupRounds + spec.rounds; round++) {
    for (const h of rotate(handlers, round)) {
      const rate = await timeRound(h.peer.name, h.handler, h.collector, json, count);
      if (round >= spec.warmupRounds) h.rounds.push(rate);
    }
  }
  const out: Record<string, Record<keyof RoundRate, number>> = {};
  for (const h of handlers) {
    const of = (key: keyof RoundRate) => median(h.rounds.map((r) => r[key]));
    out[h.peer.id] = {
      cpu: of('cpu'),
      wall: of('wall'),
      billed: of('billed'),
      gcScavengeMs: of('gcScavengeMs'),
      gcOtherMs: of('gcOtherMs'),
    };
  }
  return out;
}

async function heap(spec: HeapSpec): Promise<Record<string, HeapResult>> {
  const gc = fullGc();
  const json = workloadBatches(
    spec.workload,
    spec.seed,
    spec.batchSize,
    spec.warmupInvocations + spec.samples,
  ).map((b) => JSON.stringify(b));
  const collections: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collections.push(entry.startTime);
  });
  observer.observe({ entryTypes: ['gc'] });
  const out: Record<string, HeapResult> = {};
  for (const id of spec.peers) {
    const peer = peerById(id);
    const collector = newCollector();
    const handler = peer.create(collector, spec.workload);
    const context = benchContext();
    for (let i = 0; i < spec.warmupInvocations; i++) {
      await handler(JSON.parse(json[i] as string), context);
      resetCollector(collector);
    }
    const heapBytes: number[] = [];
    const externalBytes: number[] = [];
    for (let i = spec.warmupInvocations; i < json.length; i++) {
      const event = JSON.parse(json[i] as string) as unknown;
      gc();
      gc();
      // Let the observer see the forced collections before the window opens.
      await new Promise((resolve) => setImmediate(resolve));
      const start = performance.now();
      const before = process.memoryUsage();
      await handler(event, context);
      const after = process.memoryUsage();
      const end = performance.now();
      await new Promise((resolve) => setImmediate(resolve));
      if (collections.some((t) => t >= start && t <= end)) continue;
      heapBytes.push(after.heapUsed - before.heapUsed);
      // `external` includes ArrayBuffers (Buffers, Uint8Arrays with their own backing store).
      externalBytes.push(after.external - before.external);
      resetCollector(collector);
    }
    if (heapBytes.length === 0)
      throw new Error(`${peer.name}: a collection ran inside every sampled invocation`);
    out[id] = {
      heapBytes: median(heapBytes),
      externalBytes: median(externalBytes),
      samples: heapBytes.length,
    };
  }
  observer.disconnect();
  return out;
}

const [mode, specText] = process.argv.slice(2);
if (specText === undefined) throw new Error('usage: throughput-worker.ts rates|shared|heap <json spec>');
const spec = JSON.parse(specText) as unknown;
const result =
  mode === 'rates'
    ? await rates(spec as RatesSpec)
    : mode === 'shared'
      ? await shared(spec as SharedSpec)
      : await heap(spec as HeapSpec);
process.stdout.write(`\n${JSON.stringify(result)}\n`);
