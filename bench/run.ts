/**
 * `npm run bench [-- --quick] [-- --only <name>[,<name>]] [-- --src]` (default: tidewater timed from a fresh dist/ build)
 *
 * Discovers bench/suites/*.ts, runs each in a fresh child process (isolation: one suite's JIT and
 * GC state, servers or crash cannot skew another), prints progress, and rewrites BENCHMARKS.md:
 * machine, versions, the exact command, date, then each suite's markdown. A failing suite is
 * reported as failed in the file; the others still run; the exit code is non-zero if any failed.
 * With --only, sections of suites not run are kept from the previous BENCHMARKS.md.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ChildOutcome } from './lib/child.js';
import { machineInfo, packageVersions } from './lib/machine.js';
import { bytes, fixed, table } from './lib/markdown.js';
import { extractSections, renderSection, type SectionResult } from './lib/report.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const suitesDir = join(root, 'bench', 'suites');
const outDir = join(root, 'bench', '.out');
const reportFile = join(root, 'BENCHMARKS.md');

/** Suites the README's story reads in; any other suite follows alphabetically. */
const ORDER = ['throughput', 'cold-start', 'unmarshall', 'archive-cost', 'aggregator', 'replay', 'kinesis'];

function discover(): { name: string; file: string }[] {
  const files = existsSync(suitesDir)
    ? readdirSync(suitesDir).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    : [];
  const suites = files.map((f) => ({ name: f.slice(0, -3), file: join(suitesDir, f) }));
  const rank = (n: string): number => {
    const i = ORDER.indexOf(n);
    return i < 0 ? ORDER.length : i;
  };
  return suites.sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
}

/**
 * The suites time tidewater from dist/ (bench/lib/use-dist.mjs), what the package ships; build it
 * from the current src/ first so the numbers are for this checkout. tsc emits even when it
 * reports type errors elsewhere, so a failing typecheck is reported but does not stop the run.
 */
function buildDist(): void {
  const started = performance.now();
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
    cwd: root,
    encoding: 'utf8',
  });
  if (result.error !== undefined) throw result.error;
  if (result.status !== 0) {
    console.error(
      `tsc -p tsconfig.build.json exited ${result.status}; dist/ emitted anyway:\n${result.stdout}`,
    );
  }
  // The DynamoDB Local launcher's class, as `npm run build` compiles it (suites start DynamoDB Local).
  const java = spawnSync(process.execPath, [join(root, 'scripts', 'build-java.js')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (java.status !== 0) throw new Error(`scripts/build-java.js exited ${java.status}`);
  console.log(`dist/ built in ${fixed((performance.now() - started) / 1000, 1)} s`);
}

function runChild(
  file: string,
  quick: boolean,
  timeoutMs: number,
  source: 'dist' | 'src',
): Promise<ChildOutcome> {
  mkdirSync(outDir, { recursive: true });
  const out = join(outDir, `result-${process.pid}-${relative(suitesDir, file).replaceAll('/', '_')}.json`);
  const args = ['--expose-gc', '--import', 'tsx', join(root, 'bench', 'lib', 'child.ts'), file, out];
  if (quick) args.push('--quick');
  const started = performance.now();
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
      // Node 20 here; the SDK's end-of-support notice is noise in bench output.
      env: {
        AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
        ...process.env,
        TIDEWATER_BENCH_SOURCE: source,
      },
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      if (timedOut) {
        resolvePromise({ ok: false, error: `timed out after ${timeoutMs / 1000} s`, ms });
        return;
      }
      if (!existsSync(out)) {
        resolvePromise({
          ok: false,
          error: `suite process exited (code ${code}, signal ${signal}) without a result`,
          ms,
        });
        return;
      }
      const outcome = JSON.parse(readFileSync(out, 'utf8')) as ChildOutcome;
      rmSync(out, { force: true });
      resolvePromise(outcome);
    });
  });
}

function bundleSizesNote(): string {
  const file = join(outDir, 'bundle-sizes.json');
  if (!existsSync(file)) return '';
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as {
      packagedAt?: string;
      functions?: Record<string, { codeBytes?: number; zipBytes?: number }>;
    };
    const rows = Object.entries(parsed.functions ?? {}).map(([name, s]) => [
      name,
      s.codeBytes === undefined ? '—' : bytes(s.codeBytes),
      s.zipBytes === undefined ? '—' : bytes(s.zipBytes),
    ]);
    if (rows.length === 0) return '';
    return `\n\n### Deployed bundles (\`npm run package\`, ${parsed.packagedAt ?? 'date unknown'})\n\n${table(['function', 'code', 'zip'], rows, ['left', 'right', 'right'])}`;
  } catch {
    return '';
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string', multiple: true },
      // Time tidewater straight from src/ through tsx (no build): for comparison only.
      src: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const quick = values.quick === true;
  const source = values.src === true ? 'src' : 'dist';
  const only = new Set(
    (values.only ?? [])
      .flatMap((o) => o.split(','))
      .map((o) => o.trim())
      .filter(Boolean),
  );
  const all = discover();
  for (const name of only) {
    if (!all.some((s) => s.name === name)) {
      throw new Error(`--only ${name}: no such suite (have: ${all.map((s) => s.name).join(', ')})`);
    }
  }
  const selected = only.size === 0 ? all : all.filter((s) => only.has(s.name));
  const command = `npm run bench${quick || only.size > 0 || source === 'src' ? ' --' : ''}${quick ? ' --quick' : ''}${[...only].map((o) => ` --only ${o}`).join('')}${source === 'src' ? ' --src' : ''}`;
  const date = new Date().toISOString();
  console.log(
    `tidewater bench: ${selected.length} suite(s)${quick ? ', quick' : ''}: ${selected.map((s) => s.name).join(', ')}`,
  );

  if (source === 'dist') buildDist();
  const results: SectionResult[] = [];
  const machine = machineInfo();
  const started = performance.now();
  for (const [i, suite] of selected.entries()) {
    console.log(`[${i + 1}/${selected.length}] ${suite.name} …`);
    // The throughput suite starts a process per implementation, workload, batch size and method
    // (three workloads since issue 37: ~15 minutes on a quiet machine).
    const outcome = await runChild(suite.file, quick, quick ? 600_000 : 1_800_000, source);
    console.log(
      `[${i + 1}/${selected.length}] ${suite.name} ${outcome.ok ? 'done' : 'FAILED'} in ${fixed(outcome.ms / 1000, 1)} s`,
    );
    if (!outcome.ok) console.error(outcome.error);
    results.push({ name: suite.name, outcome, command, date });
  }
  const totalSeconds = (performance.now() - started) / 1000;

  const previous = existsSync(reportFile)
    ? extractSections(readFileSync(reportFile, 'utf8'))
    : new Map<string, string>();
  const versions = packageVersions(root);
  const sections: string[] = [];
  for (const suite of all) {
    const result = results.find((r) => r.name === suite.name);
    if (result !== undefined)
      sections.push(renderSection(result, suite.name === 'cold-start' ? bundleSizesNote() : ''));
    else if (previous.has(suite.name)) sections.push(previous.get(suite.name) as string);
  }
  const header = [
    '# Benchmarks',
    '',
    '<!-- Generated by `npm run bench` (bench/run.ts). Edit the suites, not this file. -->',
    '',
    `Last run: \`${command}\` on ${date} (${fixed(totalSeconds, 0)} s${quick ? ', quick mode: fewer rounds, numbers are noisier' : ''}).`,
    'Each suite runs in its own Node process; each section says when and how it was measured.',
    source === 'dist'
      ? 'tidewater is timed as it ships: the tsc build in `dist/` (built from this checkout first), plain JS like the peers in node_modules.'
      : 'tidewater was timed from `src/` through tsx (`--src`): esbuild with keepNames adds a naming call per closure; not what ships.',
    'Absolute rates depend on the machine and its load; compare the ratios, measured side by side in one run.',
    'Reproduce: `npm ci && npm run bench` (full) or `npm run bench -- --quick`; one suite: `npm run bench -- --only throughput`.',
    '',
    '## Machine',
    '',
    table(
      ['CPU', 'cores', 'memory', 'OS', 'node', 'load avg (1 min) at start'],
      [
        [
          machine.cpu,
          String(machine.cores),
          `${machine.memoryGiB} GiB`,
          machine.os,
          machine.node,
          String(machine.load),
        ],
      ],
    ),
    '',
    '## Versions',
    '',
    table(
      ['package', 'version'],
      Object.entries(versions).map(([k, v]) => [k, v]),
    ),
    '',
  ].join('\n');
  writeFileSync(reportFile, `${header}\n${sections.join('\n\n')}\n`);
  writeFileSync(
    join(outDir, 'results.json'),
    `${JSON.stringify({ command, date, machine, versions, results }, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`,
  );
  const failed = results.filter((r) => !r.outcome.ok);
  console.log(
    `BENCHMARKS.md written (${fixed(totalSeconds, 1)} s); ${failed.length} failed${failed.length > 0 ? `: ${failed.map((f) => f.name).join(', ')}` : ''}`,
  );
  if (failed.length > 0) process.exitCode = 1;
}

await main();
