// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables, not template literals
// Issue 36 §4 through the built CLI: `tidewater start` on a 2 KB serverless.yml whose variables
// double ends with the typed error (not gigabytes later), and SIGTERM ends `start` while it is
// still reading one. Generous bounds turn "never" into a failure; nothing here measures time.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';

const BIN = join(process.cwd(), 'dist', 'cli', 'bin.js');
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** serverless.yml with `custom.v0` … `custom.v30`, each the one before twice in `shape`. */
function doublingService(first: string, shape: (before: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tidewater-start-bounds-'));
  made.push(dir);
  const lines = ['service: doubling', 'provider:', '  name: aws', 'custom:', `  v0: ${first}`];
  for (let i = 1; i <= 30; i++) lines.push(`  v${i}: ${shape(`\${self:custom.v${i - 1}}`)}`);
  lines.push(
    'functions:',
    '  f:',
    '    handler: h.handler',
    '    environment:',
    '      BIG: ${self:custom.v30}',
  );
  const file = join(dir, 'serverless.yml');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** `tidewater start -c <file>` from dist/, its stderr collected, killed if a test leaves it running. */
function start(file: string): {
  child: ChildProcess;
  stderr: () => string;
  ended: Promise<[number | null, string | null]>;
} {
  const child = spawn(process.execPath, [BIN, 'start', '-c', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const ended = new Promise<[number | null, string | null]>((resolve) =>
    child.once('exit', (code, signal) => resolve([code, signal])),
  );
  return { child, stderr: () => stderr, ended };
}

describe('tidewater start on a hostile serverless.yml', () => {
  it('a string doubling through ${self:…}: exits with the ServerlessConfigError naming the file', async () => {
    const file = doublingService('xxxxxxxxxxxxxxxx', (before) => `${before}${before}`);
    const run = start(file);
    const [code] = await run.ended;
    expect(code).toBe(EXIT.error);
    expect(run.stderr()).toContain(`ServerlessConfigError: ${file}`);
    expect(run.stderr()).toMatch(/a string longer than \d+ characters/);
    expect(run.stderr()).not.toMatch(/RangeError|heap out of memory/);
  }, 60_000);

  // The list doubling takes the resolver its whole step budget: SIGTERM lands before the CLI has
  // loaded, or while the file is being read; start ends every time (a synchronous loop without
  // bound never lets the signal handler run, and grows until the heap runs out).
  it.each([0, 1000, 2000])(
    'SIGTERM %i ms after spawn ends start',
    async (after) => {
      const file = doublingService('[a, b]', (before) => `['${before}', '${before}']`);
      const run = start(file);
      await new Promise((resolve) => setTimeout(resolve, after));
      run.child.kill('SIGTERM');
      const outcome = await Promise.race([
        run.ended.then(() => 'ended'),
        new Promise((resolve) => setTimeout(() => resolve('still running 30 s after SIGTERM'), 30_000)),
      ]);
      expect(outcome).toBe('ended');
      expect(run.stderr()).not.toMatch(/RangeError|heap out of memory/);
    },
    60_000,
  );
});
