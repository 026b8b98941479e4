/**
 * Runs one suite in its own process (spawned by bench/run.ts): a suite then cannot skew
 * another's JIT/GC state, and a crash or hang is contained. The result goes to a JSON file.
 */
import { writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { isSuite } from './suite.js';

export interface ChildOutcome {
  ok: boolean;
  name?: string;
  title?: string;
  markdown?: string;
  data?: unknown;
  error?: string;
  ms: number;
}

async function main(): Promise<void> {
  const [file, out, ...flags] = process.argv.slice(2);
  if (file === undefined || out === undefined)
    throw new Error('usage: child.ts <suite file> <out json> [--quick]');
  const quick = flags.includes('--quick');
  // Registered before the suite is imported, so every tidewater module it loads comes from dist/.
  if (process.env.TIDEWATER_BENCH_SOURCE !== 'src') register('./use-dist.mjs', import.meta.url);
  const started = performance.now();
  let outcome: ChildOutcome;
  try {
    const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
    if (!isSuite(mod.default)) throw new Error(`${file} does not default-export { name, title, run }`);
    const suite = mod.default;
    const log = (message: string): void => {
      process.stdout.write(`  [${suite.name}] ${message}\n`);
    };
    const result = await suite.run({ quick, log });
    if (typeof result?.markdown !== 'string') throw new Error(`suite ${suite.name} returned no markdown`);
    outcome = {
      ok: true,
      name: suite.name,
      title: suite.title,
      markdown: result.markdown,
      data: result.data,
      ms: performance.now() - started,
    };
  } catch (error) {
    const text =
      error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
    outcome = { ok: false, error: text, ms: performance.now() - started };
  }
  writeFileSync(
    out,
    JSON.stringify(outcome, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
  );
  // Suites may leave servers or timers behind; the parent only needs the file.
  process.exit(0);
}

await main();
