import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { type ArchiveRow, rowToLambdaRecord } from '../../src/archive/format.js';
import { benchContext } from '../lib/lambda-context.js';
import { bytes, fixed, goal, int, ratio, table, whyMissed } from '../lib/markdown.js';
import { median, quartiles, rotate } from '../lib/stats.js';
import type { Suite, SuiteContext } from '../lib/suite.js';
import { groupedBarChart } from '../lib/svg.js';
import { type RoundRate, SETTLE_AFTER_GC_MS, timeRound, workloadBatches } from '../lib/throughput-rounds.js';
import type { HeapResult, HeapSpec, RatesSpec } from '../lib/throughput-worker.js';
import { type Collector, newCollector, PEERS, type Peer, VARIANTS, type Workload } from '../peers/index.js';

const SEED = 20_260_101;
const BATCH_SIZES = [100, 1000] as const;
/** The four compared, then extra variants shown in the table only. */
const ALL: readonly Peer[] = [...PEERS, ...VARIANTS];

function peersFor(workload: Workload): readonly Peer[] {
  return ALL.filter((p) => p.only === undefined || p.only.includes(workload));
}

const LABEL: Record<Workload, string> = {
  materialize: '(B) every image read',
  binaries: '(C) binary-heavy images, every image read and every binary decoded',
  archive: '(A) the archive case',
};
/**
 * (B) first: the headline (every implementation reads every image); (C) the same on binary-heavy
 * images (issue 37); (A) is the archive case.
 */
const REPORT_ORDER: readonly Workload[] = ['materialize', 'binaries', 'archive'];
const here = dirname(fileURLToPath(import.meta.url));
const CHART = join(here, '..', 'throughput.svg');
const WORKER = join(here, '..', 'lib', 'throughput-worker.ts');
/** Implementations timed alone (and with a full GC between invocations) and weighed. */
function aloneIds(workload: Workload): readonly string[] {
  const ids = ['tidewater', 'tidewater-direct', 'powertools', 'middy', 'hand-loop'];
  return workload === 'archive' ? ids : [...ids, 'hand-loop-isolated'];
}
/** The semi-space that keeps one 1,000-record invocation free of scavenges (heap measurement). */
const HEAP_SEMI_SPACE_MB = 256;
const HEAP_GOAL_BYTES = 2.5 * 1024 * 1024;

interface Plan {
  recordsPerRound: number;
  warmupRounds: number;
  rounds: number;
}

interface Plans {
  /** Every implementation in one process, rotated. */
  shared: Plan;
  /**
   * Each implementation alone in a fresh process, then `gcRounds` with a full GC between
   * invocations; `processes` such processes per implementation, interleaved, their rounds pooled.
   */
  alone: Plan & { gcRounds: number; processes: number };
  heap: { warmupInvocations: number; samples: number };
}

type Method = 'alone' | 'gc' | 'shared';

interface PeerResult {
  id: string;
  workload: Workload;
  name: string;
  batchSize: number;
  method: Method;
  /** Median records per CPU-second: the headline number (robust to other load on the machine). */
  median: number;
  q1: number;
  q3: number;
  /** Median records per wall-clock second. */
  wallMedian: number;
  /** Median records per CPU-second of the whole invocation: the event's JSON.parse plus the handler. */
  billedMedian: number;
  /** Median main-thread GC pause per 1,000 records inside the handler calls: scavenges, the rest. */
  gcScavengeMs: number;
  gcOtherMs: number;
  rounds: RoundRate[];
}

/** Keys sorted, so rows of different implementations compare by content. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The archived stream records, whatever the row shape: the peers write the raw Lambda record as
 * each line, tidewater its archive row (which rowToLambdaRecord turns back into that record).
 */
function archivedRecords(collector: Collector): string[] {
  return collector.objects.flatMap((o) =>
    gunzipSync(o)
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const row = JSON.parse(line) as ArchiveRow & { dynamodb?: unknown };
        return canonicalJson(row.dynamodb === undefined ? rowToLambdaRecord(row) : row);
      }),
  );
}

/**
 * Fingerprint of what a handler produced, to prove all implementations did the same work before
 * timing them: kinds and sequence numbers of every record in order, the archived records byte
 * for byte (as canonical JSON), and for `materialize` which records carry images. `archive`
 * reads no image (tidewater's stay lazy, as in the timed runs).
 */
function fingerprint(collector: Collector, workload: Workload): string {
  const items = collector.items.map((i) => `${i.kind}@${i.sequenceNumber}`).join(',');
  const archive = archivedRecords(collector).join('\n');
  const images =
    workload === 'materialize'
      ? collector.items.filter((i) => i.newImage !== undefined || i.oldImage !== undefined).length
      : '-';
  return `${collector.items.length}:${images}:${items}:${collector.objects.length}:${archive}`;
}

async function verify(peers: readonly Peer[], workload: Workload, json: string): Promise<void> {
  const seen = new Map<string, string>();
  for (const peer of peers) {
    const collector = newCollector();
    const response = await peer.create(collector, workload)(JSON.parse(json), benchContext());
    if ((response?.batchItemFailures.length ?? 0) !== 0) {
      throw new Error(`${peer.name} reported failures on valid records: ${JSON.stringify(response)}`);
    }
    if (collector.objects.length === 0) throw new Error(`${peer.name} archived nothing`);
    seen.set(peer.name, fingerprint(collector, workload));
  }
  const distinct = new Set(seen.values());
  if (distinct.size !== 1) {
    throw new Error(
      `peers did different work (${workload}): ${[...seen].map(([k, v]) => `${k}=${v.slice(0, 60)}…`).join(', ')}`,
    );
  }
}

async function measureShared(
  workload: Workload,
  batchSize: number,
  plan: Plan,
  log: SuiteContext['log'],
): Promise<PeerResult[]> {
  const peers = peersFor(workload);
  const batches = Math.max(1, Math.round(plan.recordsPerRound / batchSize));
  const json = workloadBatches(workload, SEED + batchSize, batchSize, batches).map((b) => JSON.stringify(b));
  await verify(peers, workload, json[0] as string);
  const count = batches * batchSize;
  const handlers = peers.map((peer) => {
    const collector = newCollector();
    return { peer, collector, handler: peer.create(collector, workload) };
  });
  const rates = new Map<string, RoundRate[]>(peers.map((p) => [p.id, []]));
  const total = plan.warmupRounds + plan.rounds;
  for (let round = 0; round < total; round++) {
    for (const { peer, collector, handler } of rotate(handlers, round)) {
      const rate = await timeRound(peer.name, handler, collector, json, count);
      if (round >= plan.warmupRounds) rates.get(peer.id)?.push(rate);
    }
  }
  const results = peers.map((peer) =>
    summarize(peer, workload, batchSize, 'shared', rates.get(peer.id) ?? []),
  );
  log(`shared ${workload} @${batchSize}: ${results.map((r) => `${r.id} ${int(r.median)}/s`).join(', ')}`);
  return results;
}

function summarize(
  peer: Peer,
  workload: Workload,
  batchSize: number,
  method: Method,
  r: RoundRate[],
): PeerResult {
  const cpu = r.map((x) => x.cpu);
  return {
    id: peer.id,
    workload,
    name: peer.name,
    batchSize,
    method,
    median: median(cpu),
    ...quartiles(cpu),
    wallMedian: median(r.map((x) => x.wall)),
    billedMedian: median(r.map((x) => x.billed)),
    gcScavengeMs: median(r.map((x) => x.gcScavengeMs)),
    gcOtherMs: median(r.map((x) => x.gcOtherMs)),
    rounds: r,
  };
}

/** Runs bench/lib/throughput-worker.ts and returns the JSON on its last line of output. */
function runWorker<T>(mode: 'rates' | 'heap', spec: RatesSpec | HeapSpec, flags: string[]): Promise<T> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', ...flags, '--import', 'tsx', WORKER, mode, JSON.stringify(spec)],
      { encoding: 'utf8', env: process.env, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null) {
          reject(
            new Error(`throughput worker (${mode} ${JSON.stringify(spec)}): ${error.message}\n${stderr}`),
          );
          return;
        }
        const last = stdout.trim().split('\n').pop() as string;
        resolvePromise(JSON.parse(last) as T);
      },
    );
  });
}

/**
 * Each implementation alone in a fresh process of its own: its rate with no other code in the
 * process, then (same process, same rounds) with a full GC between invocations. `processes`
 * processes per implementation, one after another in rounds of every implementation (the order
 * rotated each time), and each implementation's rounds pooled over its processes: one process's
 * rate moves with where its scavenges fall against its invocations and with other load on the
 * machine, so a single process per implementation was no sound comparison.
 */
async function measureAlone(
  workload: Workload,
  batchSize: number,
  plan: Plans['alone'],
  log: SuiteContext['log'],
): Promise<PeerResult[]> {
  const { processes, ...rounds } = plan;
  const ids = aloneIds(workload);
  const pooled = new Map<string, { alone: RoundRate[]; gc: RoundRate[] }>(
    ids.map((id) => [id, { alone: [], gc: [] }]),
  );
  for (let p = 0; p < processes; p++) {
    for (const id of rotate(ids, (batchSize === 100 ? 0 : 2) + p)) {
      const spec: RatesSpec = { peer: id, workload, batchSize, seed: SEED + batchSize, ...rounds };
      const out = await runWorker<{ alone: RoundRate[]; gc: RoundRate[] }>('rates', spec, []);
      const into = pooled.get(id)!;
      into.alone.push(...out.alone);
      into.gc.push(...out.gc);
    }
  }
  const results: PeerResult[] = [];
  for (const id of ids) {
    const peer = ALL.find((p) => p.id === id) as Peer;
    const { alone, gc } = pooled.get(id)!;
    results.push(summarize(peer, workload, batchSize, 'alone', alone));
    results.push(summarize(peer, workload, batchSize, 'gc', gc));
  }
  const line = (m: Method) =>
    results
      .filter((r) => r.method === m)
      .map((r) => `${r.id} ${int(r.median)}/s`)
      .join(', ');
  log(`alone ${workload} @${batchSize}: ${line('alone')}; with a full GC between invocations: ${line('gc')}`);
  return results;
}

/** Heap allocated per 1,000-record invocation, per implementation (one process per workload). */
async function measureHeap(workload: Workload, plans: Plans, log: SuiteContext['log']) {
  const spec: HeapSpec = {
    peers: [...aloneIds(workload)],
    workload,
    batchSize: 1000,
    seed: SEED + 1000,
    ...plans.heap,
  };
  const semi = String(HEAP_SEMI_SPACE_MB);
  const out = await runWorker<Record<string, HeapResult>>('heap', spec, [
    `--min-semi-space-size=${semi}`,
    `--max-semi-space-size=${semi}`,
  ]);
  log(
    `heap ${workload} @1000: ${Object.entries(out)
      .map(([id, h]) => `${id} ${bytes(h.heapBytes)}`)
      .join(', ')}`,
  );
  return out;
}

function find(
  results: PeerResult[],
  workload: Workload,
  id: string,
  batchSize: number,
  method: Method,
): PeerResult {
  const found = results.find(
    (r) => r.workload === workload && r.id === id && r.batchSize === batchSize && r.method === method,
  );
  if (found === undefined)
    throw new Error(`no ${method} result for ${id} (${workload}) at batch ${batchSize}`);
  return found;
}

function rateOf(
  results: PeerResult[],
  workload: Workload,
  id: string,
  batchSize: number,
  method: Method,
): number {
  return find(results, workload, id, batchSize, method).median;
}

const pct = (change: number): string => `${change >= 0 ? '+' : '−'}${fixed(Math.abs(change) * 100, 0)}%`;

/** What each method's rounds are, named in every table's caption. */
const METHOD: Record<Method, string> = {
  alone: 'alone (each implementation in a fresh process of its own)',
  gc: 'alone with a full GC between invocations (same processes)',
  shared: 'shared process (every implementation in one process, order rotated each round)',
};

/** The three methods side by side: rates, then tidewater's ratio to each implementation. */
function methodTables(results: PeerResult[], workload: Workload, heap: Record<string, HeapResult>): string[] {
  const peers = aloneIds(workload).map((id) => ALL.find((p) => p.id === id) as Peer);
  const rateRows = peers.map((peer) => [
    peer.name,
    ...BATCH_SIZES.flatMap((b) => {
      const alone = rateOf(results, workload, peer.id, b, 'alone');
      const gc = rateOf(results, workload, peer.id, b, 'gc');
      return [
        int(alone),
        `${int(gc)} (${pct(gc / alone - 1)})`,
        int(rateOf(results, workload, peer.id, b, 'shared')),
      ];
    }),
  ]);
  const ratioRows = peers.map((peer) => [
    peer.name,
    ...BATCH_SIZES.flatMap((b) =>
      (['alone', 'gc', 'shared'] as const).map((m) =>
        ratio(rateOf(results, workload, 'tidewater', b, m) / rateOf(results, workload, peer.id, b, m)),
      ),
    ),
  ]);
  const columns = (what: string) => [
    'implementation',
    ...BATCH_SIZES.flatMap((b) => [`alone @${b}`, `${what} GC @${b}`, `shared @${b}`]),
  ];
  const aligned = ['left', ...BATCH_SIZES.flatMap(() => ['right', 'right', 'right'] as const)] as const;
  const twoMethods = ['implementation', ...BATCH_SIZES.flatMap((b) => [`alone @${b}`, `shared @${b}`])];
  const twoAligned = ['left', ...BATCH_SIZES.flatMap(() => ['right', 'right'] as const)] as const;
  const billedRows = peers.map((peer) => [
    peer.name,
    ...BATCH_SIZES.flatMap((b) =>
      (['alone', 'shared'] as const).map((m) => {
        const r = find(results, workload, peer.id, b, m);
        const tw = find(results, workload, 'tidewater', b, m);
        return `${int(r.billedMedian)} (${ratio(tw.billedMedian / r.billedMedian)})`;
      }),
    ),
  ]);
  const gcRows = peers.map((peer) => [
    peer.name,
    ...BATCH_SIZES.flatMap((b) =>
      (['alone', 'shared'] as const).map((m) => {
        const r = find(results, workload, peer.id, b, m);
        return `${fixed(r.gcScavengeMs + r.gcOtherMs, 2)} (${fixed(r.gcScavengeMs, 2)} + ${fixed(r.gcOtherMs, 2)})`;
      }),
    ),
  ]);
  return [
    `Records per CPU-second of the handler calls (median of rounds) by method: **alone** — ${METHOD.alone};`,
    `**+ full GC** — ${METHOD.gc} (change in its own rate); **shared** — ${METHOD.shared}:`,
    '',
    table(columns('+ full'), rateRows, [...aligned]),
    '',
    "tidewater's rate divided by each implementation's, per method (alone / with full GC / shared, as above):",
    '',
    table(columns('with'), ratioRows, [...aligned]),
    '',
    "The whole invocation as Lambda bills it, by method (alone; shared): CPU records per second of the event's",
    "`JSON.parse` plus the handler, same rounds, and tidewater's rate divided by it in brackets:",
    '',
    table(twoMethods, billedRows, [...twoAligned]),
    '',
    'Main-thread garbage-collection pauses that began inside the handler calls, ms per 1,000 records',
    '(median of rounds; scavenges + the rest), by method (alone; shared). Under the shared method a',
    "collection is charged to whichever implementation is running when it starts, whoever's garbage it is:",
    '',
    table(twoMethods, gcRows, [...twoAligned]),
    '',
    'Heap allocated per 1,000-record invocation (alone method, one process per workload, warm; JS',
    'heap, and memory outside it — ArrayBuffers, Buffers — that grew over the invocation):',
    '',
    table(
      ['implementation', 'JS heap', 'outside the heap'],
      peers.map((peer) => {
        const h = heap[peer.id];
        return [
          peer.name,
          h === undefined ? '—' : bytes(h.heapBytes),
          h === undefined ? '—' : bytes(h.externalBytes),
        ];
      }),
      ['left', 'right', 'right'],
    ),
  ];
}

/** The shared-process method in detail (IQR, wall clock, as Lambda bills it), as before. */
function sharedTables(results: PeerResult[], workload: Workload): string[] {
  const peers = peersFor(workload);
  const rows = peers.map((peer) => [
    peer.name,
    ...BATCH_SIZES.flatMap((b) => {
      const r = find(results, workload, peer.id, b, 'shared');
      return [
        int(r.median),
        `${int(r.q1)}–${int(r.q3)}`,
        ratio(rateOf(results, workload, 'tidewater', b, 'shared') / r.median),
      ];
    }),
  ]);
  const headers = [
    'implementation',
    ...BATCH_SIZES.flatMap((b) => [`records/s @${b}`, `IQR @${b}`, `tidewater ÷ it @${b}`]),
  ];
  /** Each implementation's median of one rate, and tidewater's divided by it, per batch size. */
  const rateRows = (field: 'wallMedian' | 'billedMedian') =>
    peers.map((peer) => [
      peer.name,
      ...BATCH_SIZES.flatMap((b) => {
        const r = find(results, workload, peer.id, b, 'shared');
        const tw = find(results, workload, 'tidewater', b, 'shared');
        return [int(r[field]), ratio(tw[field] / r[field])];
      }),
    ]);
  const twoColumns = [
    'implementation',
    ...BATCH_SIZES.flatMap((b) => [`records/s @${b}`, `tidewater ÷ it @${b}`]),
  ];
  const twoAligned = ['left', ...BATCH_SIZES.flatMap(() => ['right', 'right'] as const)] as const;
  return [
    `Method: ${METHOD.shared}, in detail (CPU records/s of the handler calls, IQR over rounds):`,
    '',
    table(headers, rows, ['left', ...BATCH_SIZES.flatMap(() => ['right', 'right', 'right'] as const)]),
    '',
    'Wall-clock records per second (shared process, same rounds):',
    '',
    table(twoColumns, rateRows('wallMedian'), [...twoAligned]),
    '',
    "The whole invocation as Lambda bills it, shared process: CPU records per second of the event's",
    '`JSON.parse` plus the handler (same rounds). The parse is the same work for every implementation',
    'and costs more than any handler here, so these ratios are what a deployed function saves per batch:',
    '',
    table(twoColumns, rateRows('billedMedian'), [...twoAligned]),
  ];
}

/** One goal line per batch size (and per method, when given): tidewater's rate ÷ another's. */
function ratioGoals(
  results: PeerResult[],
  workload: Workload,
  what: string,
  over: string,
  target: number,
  methods: readonly Method[],
  field: 'median' | 'billedMedian' = 'median',
): string[] {
  return methods.flatMap((m) =>
    BATCH_SIZES.map((b) =>
      goal(
        `${LABEL[workload]}, ${METHOD_SHORT[m]}: ${what} @${b}`,
        find(results, workload, 'tidewater', b, m)[field] / find(results, workload, over, b, m)[field],
        target,
        true,
        ratio,
      ),
    ),
  );
}

const METHOD_SHORT: Record<Method, string> = {
  alone: 'alone',
  gc: 'full GC between',
  shared: 'shared process',
};

/**
 * Issue 14's goals, raised by issue 37: ≥ 0.95× the hand loop and the engine ≥ 0.95× its parser
 * alone; on binary-heavy images ≥ 1.5× Powertools, ≥ 0.8× the hand loop and ≥ 0.9× the loop with
 * tidewater's isolation, alone and shared; the whole invocation ahead of Powertools by every method.
 */
function goals(results: PeerResult[], workload: Workload, heap: Record<string, HeapResult>): string[] {
  const label = LABEL[workload];
  const r = (id: string, b: number, m: Method) => rateOf(results, workload, id, b, m);
  const tidewaterHeap = heap.tidewater?.heapBytes;
  const both = ['alone', 'shared'] as const;
  const wholeInvocation = ratioGoals(
    results,
    workload,
    'whole invocation (event JSON.parse + handler), tidewater ÷ Powertools',
    'powertools',
    1,
    both,
    'billedMedian',
  );
  if (workload === 'binaries') {
    return [
      ...ratioGoals(results, workload, 'tidewater ÷ Powertools', 'powertools', 1.5, both),
      ...ratioGoals(results, workload, 'tidewater ÷ hand-written loop', 'hand-loop', 0.8, both),
      ...ratioGoals(
        results,
        workload,
        'tidewater ÷ the loop with the same isolation',
        'hand-loop-isolated',
        0.9,
        both,
      ),
      ...wholeInvocation,
    ];
  }
  return [
    goal(
      `${label}, alone: tidewater ÷ Powertools @100`,
      r('tidewater', 100, 'alone') / r('powertools', 100, 'alone'),
      4,
      true,
      ratio,
    ),
    ...ratioGoals(results, workload, 'tidewater ÷ hand-written loop', 'hand-loop', 0.95, ['alone']),
    ...ratioGoals(
      results,
      workload,
      'engine overhead, tidewater ÷ its parser + sinks with no engine',
      'tidewater-direct',
      0.95,
      ['alone'],
    ),
    ...BATCH_SIZES.map((b) =>
      goal(
        `${label}: a full GC between invocations, tidewater's rate with ÷ without (≥ 0.90× is ≤ 10% lost) @${b}`,
        r('tidewater', b, 'gc') / r('tidewater', b, 'alone'),
        0.9,
        true,
        ratio,
      ),
    ),
    ...ratioGoals(results, workload, 'tidewater ÷ Powertools', 'powertools', 2, ['shared']),
    ...wholeInvocation,
    ...(tidewaterHeap === undefined
      ? []
      : [
          goal(
            `${label}: tidewater heap allocated per 1,000-record invocation`,
            tidewaterHeap,
            HEAP_GOAL_BYTES,
            false,
            bytes,
          ),
        ]),
  ];
}

function render(
  results: PeerResult[],
  plans: Plans,
  heap: Record<Workload, Record<string, HeapResult>>,
): string {
  const goalLines = REPORT_ORDER.map((w) => goals(results, w, heap[w]));
  const missed = goalLines.flat().some((g) => g.startsWith('- ❌'));
  return [
    'Records per second of CPU time (user + system of the process) through each implementation,',
    'measured three ways, because a Lambda process is neither a clean benchmark process nor a busy',
    'shared one: **alone** (each implementation in a fresh process of its own: warm-up rounds, then',
    'measured rounds), **with a full GC between invocations** (the same process, further rounds',
    'with `global.gc()` after each invocation, untimed: what a long-lived function meets when a',
    'collection frees the previous event), and **shared** (all implementations in one',
    "process, the order rotated every round: as when other code — the user's — shares the process).",
    'Higher is better; CPU time rather than wall time because other work shares this machine (see',
    'the load average above). tidewater runs from the tsc build in `dist/` (plain JS, as it ships and',
    'as the peers run from node_modules).',
    '',
    'Three workloads, reported separately:',
    '',
    '- **(B) every image read** — the headline: parse, classify, route every record to an in-memory',
    '  sink that reads (unmarshals) its Keys, NewImage and OldImage, and every TTL delete to the',
    "  NDJSON+gzip archive encoder. Every implementation does the same work: tidewater's sink reads",
    '  all three images, the peers unmarshal them as their design does.',
    '- **(C) binary-heavy images** (issue 37) — (B) on records whose images carry 1 to 3 more',
    '  binaries of 80 to 600 bytes each (bench/lib/binary-records.ts), and every binary decoded to',
    "  bytes by every implementation: Powertools and middy decode each B and BS member with Node's",
    "  `Buffer.from(text, 'base64')` before util-dynamodb unmarshalls the image (it leaves a",
    '  Lambda-shaped B as its base64 text). The extra row "hand-written loop, each image\'s binaries in',
    '  memory of their own" (also on (B)) is the loop with tidewater\'s isolation (docs/records.md):',
    "  an image's binaries decoded natively into one `Buffer.allocUnsafeSlow` of their own, not slices",
    "  of Node's pool shared by the whole process; the gap between the two loops is what the isolation costs.",
    '- **(A) the archive case** — the same without anyone asking tidewater for an image:',
    "  tidewater's records unmarshal on first access and the archive writes the raw DynamoDB JSON, so",
    '  no image is unmarshalled (or checked) — the design, not a shortcut: a bad AttributeValue read',
    '  later makes that record a malformed, dead-lettered one. The peers as issue 9 defines them still',
    '  unmarshal every image to hand the sink a record. The extra row "hand-written loop, images not',
    '  unmarshalled" (shared method only) is that loop handing out the raw maps: the floor for this job.',
    '',
    ...REPORT_ORDER.flatMap((w) => [
      `### ${LABEL[w]}`,
      '',
      ...methodTables(results, w, heap[w]),
      '',
      ...sharedTables(results, w),
      '',
    ]),
    '![throughput by workload, batch size and method](bench/throughput.svg)',
    '',
    '**Goals** (reported, not asserted), issues 14 and 37, judged on (B) every image read and (C)',
    'binary-heavy images; the method of each is named:',
    '',
    ...(goalLines[0] as string[]),
    '',
    ...(goalLines[1] as string[]),
    '',
    'The same ratios for (A), the archive case:',
    '',
    ...(goalLines[2] as string[]),
    ...(missed ? ['', whyMissed('throughput', 'a goal is')] : []),
    '',
    '**What each implementation does** (bench/peers; before timing, the suite checks per workload',
    'that all produce the same records in order — kinds and sequence numbers —, the same archived',
    'records byte for byte as canonical JSON, and no failures):',
    '',
    '- **tidewater**: `createStreamHandler` (src/pipeline, defaults: ordered mode, lazy parse,',
    '  retries, deadline, per-invocation child logger, EMF metrics — logs and metrics produced and',
    '  discarded) with two routes: every kind → a Sink pushing each record to the array (B: images',
    "  read first); `ttl-delete` → a Sink running the S3 archive sink's object encoder",
    '  `planArchiveObjects` (archive rows, NDJSON, gzip, SHA-256 for the PUT checksum; no PUT).',
    '  Records are lossless: exact numbers, binary → Uint8Array, sets → Set. The row "tidewater',
    '  parser + sinks, no engine" is `createRecordParser()` (the pipeline\'s parse) and the same two sinks',
    "  called by hand: the engine's own cost is the gap.",
    '- **Powertools batch**: module-level `new BatchProcessor(EventType.DynamoDBStreams)` +',
    '  `processPartialResponse` (defaults), images via `@aws-sdk/util-dynamodb` `unmarshall` with',
    '  `wrapNumbers: true` — required: without it the ~20% of records holding a 38-digit number throw',
    '  and are reported as failures. Binary stays a base64 string (on (C) decoded to a Buffer first);',
    '  numbers become `{ value }` wrappers.',
    '- **middy + event-normalizer**: `@middy/event-normalizer` with `wrapNumbers: true` (required:',
    '  without it one 38-digit number fails the whole batch). The normalizer rewrites images in place',
    '  (and turns absent images into `{}`), so a lossless archive needs a middleware ahead of it that',
    '  serializes the TTL deletes first; the handler loops and pushes.',
    '- **hand-written loop**: a ~40-line unmarshaller (≤15-character numbers → `number`, longer ones',
    '  kept as strings, binary decoded, sets → Set), a `for` loop, stop at the first failure; archive',
    "  lines are `JSON.stringify(record)`. Its binaries are `Buffer.from` slices of Node's shared pool;",
    "  the isolated variant (bench/peers/hand-loop-isolated.ts) decodes an image's binaries after its",
    "  walk into one `Buffer.allocUnsafeSlow` sized for them (`buf.write(text, offset, 'base64')`).",
    '',
    `Method: seeded events (seed ${SEED} + batch size; ~45% INSERT, ~45% MODIFY, ~5% user REMOVE,`,
    '~5% TTL REMOVE; ~1.1 KB items with every attribute type, ~20% with a 38-digit number; Lambda',
    'event shape). Each invocation gets a copy of its event parsed from JSON just before it, as',
    "Lambda's runtime hands it one, and only the handler call is timed (a collection that falls",
    'inside the parse is charged to no one; the "as Lambda bills it" table times both). **Alone**:',
    `per workload, batch size and implementation ${plans.alone.processes} fresh processes (\`--expose-gc\`; interleaved, order rotated; rounds pooled), each ${plans.alone.warmupRounds} warm-up rounds,`,
    `${plans.alone.rounds} measured rounds, then ${plans.alone.gcRounds} rounds with \`global.gc()\` and a ${SETTLE_AFTER_GC_MS} ms pause before each event`,
    `is parsed (the pause lets V8's background sweeping end outside the timed call); rounds of ~${int(plans.alone.recordsPerRound)}`,
    `records. **Shared**: per workload and batch size, all implementations in this suite's process,`,
    `${plans.shared.warmupRounds} warm-up rounds, then ${plans.shared.rounds} measured rounds of ~${int(plans.shared.recordsPerRound)} records each, the order rotated every`,
    'round. No forced GC outside the GC method: a full collection makes V8 discard optimized code',
    'that referenced the freed event ("deoptimization, reason: weak objects"), which only the GC',
    'method sets out to measure. **Heap**: one process per workload with a fixed',
    `${HEAP_SEMI_SPACE_MB} MiB semi-space, so no scavenge runs inside an invocation; per implementation ${plans.heap.warmupInvocations} warm-up invocations,`,
    `then ${plans.heap.samples} sampled invocations of 1,000 records, each after two full GCs: the growth of the used heap`,
    'across the invocation is what it allocated (a sample during which a collection ran anyway is',
    'dropped); median.',
  ].join('\n');
}

const suite: Suite = {
  name: 'throughput',
  title: 'Throughput: tidewater vs Powertools, middy and a hand-written loop — alone, with GC, shared',
  async run({ quick, log }) {
    const plans: Plans = quick
      ? {
          shared: { recordsPerRound: 1000, warmupRounds: 3, rounds: 4 },
          // tidewater's engine needs ~10,000 records before its rate settles in a fresh process.
          alone: { recordsPerRound: 2000, warmupRounds: 6, rounds: 4, gcRounds: 2, processes: 1 },
          heap: { warmupInvocations: 3, samples: 3 },
        }
      : {
          shared: { recordsPerRound: 5000, warmupRounds: 3, rounds: 11 },
          // Warm-up to past the last optimizing compile of per-invocation code at batch 100 (round
          // ~8 of 5,000 records by --trace-opt): compiler threads count in process CPU time.
          // Five processes: one process's rate moves 0.6–1.3× with where its scavenges fall (bench/why/throughput.md).
          alone: { recordsPerRound: 5000, warmupRounds: 8, rounds: 5, gcRounds: 2, processes: 5 },
          heap: { warmupInvocations: 5, samples: 7 },
        };
    const results: PeerResult[] = [];
    const heap = {} as Record<Workload, Record<string, HeapResult>>;
    for (const workload of REPORT_ORDER) {
      for (const batchSize of BATCH_SIZES) {
        results.push(...(await measureShared(workload, batchSize, plans.shared, log)));
        results.push(...(await measureAlone(workload, batchSize, plans.alone, log)));
      }
      heap[workload] = await measureHeap(workload, plans, log);
    }
    const cells = REPORT_ORDER.flatMap((w) => BATCH_SIZES.map((b) => ({ w, b })));
    const svg = groupedBarChart({
      title: 'DynamoDB stream records per CPU-second, each alone in its process (median, higher is better)',
      categories: cells.map(
        ({ w, b }) => `${w === 'archive' ? 'A' : w === 'binaries' ? 'C' : 'B'} batch ${b}`,
      ),
      series: PEERS.map((peer) => ({
        name: peer.name,
        values: cells.map(({ w, b }) => rateOf(results, w, peer.id, b, 'alone')),
      })),
      yLabel: 'records / s',
    });
    writeFileSync(CHART, svg);
    log(`chart written to bench/throughput.svg`);
    return { markdown: render(results, plans, heap), data: { plans, results, heap } };
  },
};

export default suite;
