// What a user meets before any code runs: the package's shape and its answers to misuse.
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const require = createRequire(import.meta.url);

it('answers require() with a clear ESM-only error, not ERR_PACKAGE_PATH_NOT_EXPORTED', async () => {
  for (const entry of ['tidewater', 'tidewater/s3', 'tidewater/local']) {
    const failure = await run(process.execPath, ['-e', `require(${JSON.stringify(entry)})`]).then(
      () => undefined,
      (error: { stderr: string }) => error.stderr,
    );
    expect(failure).toContain('EsmOnlyPackageError');
    expect(failure).toContain('await import("tidewater")');
  }
});

it('ships what its README links to, and source maps that carry their sources', async () => {
  const root = require.resolve('tidewater/package.json').replace(/package\.json$/, '');
  const readme = await readFile(`${root}README.md`, 'utf8');
  const links = [...readme.matchAll(/\]\((?!https?:|#)([^)#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!);
  expect(links.length).toBeGreaterThan(5);
  for (const link of links) {
    await expect(stat(`${root}${link}`), link).resolves.toBeDefined();
  }
  await expect(readFile(`${root}LICENSE`, 'utf8')).resolves.toContain('MIT');
  const map = JSON.parse(await readFile(`${root}dist/index.js.map`, 'utf8')) as {
    sourcesContent?: unknown[];
  };
  expect(map.sourcesContent?.length).toBeGreaterThan(0);
});
