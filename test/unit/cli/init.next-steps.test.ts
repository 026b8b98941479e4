// Issue 38, item 15: init's "Next:" ends at a green test unless it names packaging; the step that
// makes the deployable package is listed, as docs/getting-started.md tells it.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { formatReport, initService } from '../../../src/cli/init.js';

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});

it("init's next steps include packaging, in the order getting-started gives", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-init-next-'));
  made.push(dir);
  const report = await initService({ dir });
  const text = formatReport(report);
  expect(text).toMatch(/Next:[\s\S]*npm test[\s\S]*npx osls package/);
  const guide = await readFile(new URL('../../../docs/getting-started.md', import.meta.url), 'utf8');
  expect(guide).toContain('npx osls package --stage dev');
  expect(guide.indexOf('npm test')).toBeLessThan(guide.indexOf('npx osls package'));
});
