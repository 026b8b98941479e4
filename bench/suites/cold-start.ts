import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { generateEvent } from '../lib/events.js';
import { bytes, fixed, goal, int, table, whyMissed } from '../lib/markdown.js';
import { median, rotate } from '../lib/stats.js';
import type { Suite } from '../lib/suite.js';
import { PEERS, type Peer } from '../peers/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const benchDir = join(here, '..');
// Inside the repository, so bundles resolve the external SDK packages from node_modules, as Lambda's runtime provides them.
const workDir = join(benchDir, '.out', 'cold-start');
const GOAL_MS = 5;

type Mode = 'bare' | 'import' | 'invoke';

/**
 * The measured process. Every mode reads and parses the same event file, so the difference
 * between modes is only importing the bundle (and the first invoke).
 */
const RUNNER = `import { readFileSync } from 'node:fs';
const [mode, bundle, eventFile] = process.argv.slice(2);
const event = JSON.parse(readFileSync(eventFile, 'utf8'));
const context = { awsRequestId: 'cold', functionName: 'bench', getRemainingTimeInMillis: () => 300000 };
let importMs = 0, invokeMs = 0;
if (mode !== 'bare') {
  const t0 = performance.now();
  const mod = await import(bundle);
  const t1 = performance.now();
  importMs = t1 - t0;
  if (mode === 'invoke') {
    const response = await mod.handler(event, context);
    invokeMs = performance.now() - t1;
    if (!response || response.batchItemFailures.length !== 0) throw new Error('invoke failed: ' + JSON.stringify(response));
  }
}
const cpu = process.cpuUsage();
process.stdout.write(JSON.stringify({ importMs, invokeMs, cpuMs: (cpu.user + cpu.system) / 1000 }));
`;

interface Bundle {
  peer: Peer;
  file: string;
  bytes: number;
  gzipBytes: number;
}

async function bundle(peer: Peer): Promise<Bundle> {
  const entry = join(workDir, `entry-${peer.id}.ts`);
  const modulePath = join(benchDir, 'peers', peer.module).replaceAll('\\', '/');
  writeFileSync(
    entry,
    `import { ${peer.factory} } from ${JSON.stringify(modulePath)};\nexport const handler = ${peer.factory}({ items: [], objects: [] });\n`,
  );
  const file = join(workDir, `${peer.id}.mjs`);
  await build({
    entryPoints: [entry],
    outfile: file,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    external: ['@aws-sdk/*'],
    // Bundled CommonJS dependencies call require(); ESM output needs one.
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    logLevel: 'silent',
  });
  const code = readFileSync(file);
  return { peer, file, bytes: statSync(file).size, gzipBytes: gzipSync(code, { level: 9 }).length };
}

interface Sample {
  wallMs: number;
  /** CPU time (user + system) of the whole process, boot included. */
  cpuMs: number;
  importMs: number;
  invokeMs: number;
}

function spawnOnce(runner: string, mode: Mode, file: string, eventFile: string): Sample {
  const started = performance.now();
  const result = spawnSync(process.execPath, [runner, mode, pathToFileURL(file).href, eventFile], {
    cwd: workDir,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const wallMs = performance.now() - started;
  if (result.status !== 0) throw new Error(`${mode} ${file}: exit ${result.status}: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as { importMs: number; invokeMs: number; cpuMs: number };
  return { wallMs, ...parsed };
}

const suite: Suite = {
  name: 'cold-start',
  title: 'Cold start: bundle size and fresh-process start-up',
  async run({ quick, log }) {
    rmSync(workDir, { recursive: true, force: true });
    mkdirSync(workDir, { recursive: true });
    const runner = join(workDir, 'runner.mjs');
    writeFileSync(runner, RUNNER);
    const eventFile = join(workDir, 'event-100.json');
    writeFileSync(eventFile, JSON.stringify(generateEvent({ seed: 7, count: 100 })));
    const bundles: Bundle[] = [];
    for (const peer of PEERS) bundles.push(await bundle(peer));
    log(`bundled: ${bundles.map((b) => `${b.peer.id} ${b.bytes} B`).join(', ')}`);

    const runs = quick ? 4 : 20;
    // Every variant, interleaved and rotated, so drift in machine load spreads evenly.
    const variants: { key: string; mode: Mode; file: string }[] = [
      { key: 'bare', mode: 'bare', file: runner },
    ];
    for (const b of bundles) {
      variants.push({ key: `${b.peer.id}:import`, mode: 'import', file: b.file });
      variants.push({ key: `${b.peer.id}:invoke`, mode: 'invoke', file: b.file });
    }
    const samples = new Map<string, Sample[]>(variants.map((v) => [v.key, []]));
    spawnOnce(runner, 'bare', runner, eventFile); // warm the file cache
    for (let i = 0; i < runs; i++) {
      for (const v of rotate(variants, i))
        samples.get(v.key)?.push(spawnOnce(runner, v.mode, v.file, eventFile));
    }
    const med = (key: string, field: keyof Sample): number =>
      median((samples.get(key) ?? []).map((s) => s[field]));
    const bare = med('bare', 'wallMs');
    const bareCpu = med('bare', 'cpuMs');
    const rows = bundles.map((b) => {
      const id = b.peer.id;
      return {
        id,
        name: b.peer.name,
        bytes: b.bytes,
        gzipBytes: b.gzipBytes,
        importOverBare: med(`${id}:import`, 'wallMs') - bare,
        invokeOverBare: med(`${id}:invoke`, 'wallMs') - bare,
        importCpuOverBare: med(`${id}:import`, 'cpuMs') - bareCpu,
        invokeCpuOverBare: med(`${id}:invoke`, 'cpuMs') - bareCpu,
        importInProcess: med(`${id}:import`, 'importMs'),
        firstInvokeInProcess: med(`${id}:invoke`, 'invokeMs'),
      };
    });
    log(
      `bare node ${fixed(bare, 1)} ms wall / ${fixed(bareCpu, 1)} ms CPU; ${rows.map((r) => `${r.id} +${fixed(r.invokeCpuOverBare, 1)} ms CPU`).join(', ')}`,
    );
    const tw = rows.find((r) => r.id === 'tidewater');
    if (tw === undefined) throw new Error('no tidewater bundle');
    const ms = (n: number): string => `${n >= 0 ? '+' : ''}${fixed(n, 1)} ms`;
    const markdown = [
      'Each implementation of the throughput work (bench/peers) behind a minimal Lambda handler,',
      'bundled with esbuild (bundle, minify, ESM, platform node, target node22, `@aws-sdk/*`',
      'external as the Lambda runtime provides it — so util-dynamodb, used by Powertools, is not in',
      'its bundle but is loaded at start-up). A fresh `node` process reads and parses a 100-record',
      'event file; "bare" stops there, "import" also imports the bundle, "+ invoke" also handles the',
      `100 records once. Median of ${runs} fresh processes per variant, variants interleaved. Bare node:`,
      `${fixed(bare, 1)} ms wall, ${fixed(bareCpu, 1)} ms CPU. Deltas over bare are given in process CPU`,
      'time (user + system, all threads; robust to other load on the machine) and in wall time. The',
      'in-process columns time `import()` and the first call from inside the process.',
      '',
      table(
        [
          'implementation',
          'bundle',
          'gzip',
          'import − bare (CPU)',
          'import + invoke − bare (CPU)',
          'import − bare (wall)',
          'import + invoke − bare (wall)',
          'import() in-process',
          'first invoke in-process',
        ],
        rows.map((r) => [
          r.name,
          bytes(r.bytes),
          bytes(r.gzipBytes),
          ms(r.importCpuOverBare),
          ms(r.invokeCpuOverBare),
          ms(r.importOverBare),
          ms(r.invokeOverBare),
          `${fixed(r.importInProcess, 1)} ms`,
          `${fixed(r.firstInvokeInProcess, 1)} ms`,
        ]),
        ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
      ),
      '',
      '**Goal** (reported, not asserted):',
      '',
      goal(
        'tidewater import + first 100-record invoke over bare node (CPU)',
        tw.invokeCpuOverBare,
        GOAL_MS,
        false,
        (n) => `${fixed(n, 1)} ms`,
      ),
      goal(
        'tidewater import + first 100-record invoke over bare node (wall)',
        tw.invokeOverBare,
        GOAL_MS,
        false,
        (n) => `${fixed(n, 1)} ms`,
      ),
      ...(Math.min(tw.invokeCpuOverBare, tw.invokeOverBare) > GOAL_MS
        ? ['', whyMissed('cold-start', 'the goal is')]
        : []),
      '',
      `Bundle sizes in bytes: ${rows.map((r) => `${r.id} ${int(r.bytes)} (gzip ${int(r.gzipBytes)})`).join(', ')}.`,
    ].join('\n');
    return { markdown, data: { bareMs: bare, bareCpuMs: bareCpu, runs, rows } };
  },
};

export default suite;
