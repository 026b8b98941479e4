import { afterEach, expect, it, vi } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

// `tidewater demo` (what `npm start` runs): tidewater's own service, from this package's
// serverless.yml, infra/ and handlers, whatever the working directory.
it("tidewater demo runs tidewater's own service from any folder and prints a summary that holds", async () => {
  const out: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const cwd = process.cwd();
  process.chdir('/');
  let code: number;
  try {
    code = await main([
      'demo',
      '--expired',
      '2',
      '--user-deletes',
      '1',
      '--votes',
      '8',
      '--timeout',
      '300',
      '--json',
    ]);
  } finally {
    process.chdir(cwd);
  }
  const summary = JSON.parse(out.join(''));
  expect(summary.problems).toEqual([]);
  expect(code).toBe(EXIT.ok);
  expect(summary.archive).toMatchObject({ ttlDeletesArchived: 2, userDeletesArchived: 1 });
  expect(summary.votes.totals.map((t: { total: string }) => t.total)).toEqual(['2', '2', '2', '2']);
}, 600_000);
