// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables, not template literals
// Issue 36 §4: a small serverless.yml whose variables multiply, nest or name deep files ends in a
// ServerlessConfigError, in bounded work: RESOLUTION_LIMITS' budgets, spent and refused by name.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerlessConfigError } from '../../../../src/local/config/errors.js';
import { loadServerlessConfig } from '../../../../src/local/config/serverless-config.js';
import { RESOLUTION_LIMITS } from '../../../../src/local/config/variables.js';
import { tempDirs } from './reader-kit.js';

const temp = tempDirs('tidewater-variables-bounds-');
afterEach(() => temp.clean());

/** The error resolving `path` of a serverless.yml made of `lines` (after `service: s`) ends in. */
async function resolveError(lines: readonly string[], path: string, files: Record<string, string> = {}) {
  const dir = temp.make();
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const file = join(dir, 'serverless.yml');
  writeFileSync(file, ['service: s', ...lines, ''].join('\n'));
  const config = await loadServerlessConfig({ file });
  const error = await config.get(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServerlessConfigError);
  expect((error as ServerlessConfigError).file).toBe(file);
  return error as ServerlessConfigError;
}

/** `custom.v0` … `custom.v<levels>`, each the one before written twice in `shape`. */
function doubling(levels: number, first: string, shape: (before: string) => string): string[] {
  const lines = ['custom:', `  v0: ${first}`];
  for (let i = 1; i <= levels; i++) lines.push(`  v${i}: ${shape(`\${self:custom.v${i - 1}}`)}`);
  return lines;
}

describe('VariableResolver: bounded on hostile serverless.yml', () => {
  it('a string doubling through ${self:…} (2^30 characters from 2 KB): refused at the longest string', async () => {
    const lines = doubling(30, 'xxxxxxxxxxxxxxxx', (before) => `${before}${before}`);
    expect(lines.join('\n').length).toBeLessThan(2048);
    const error = await resolveError(lines, 'custom.v30');
    expect(error.message).toContain(`a string longer than ${RESOLUTION_LIMITS.stringLength} characters`);
  });

  it('many strings under the longest, together past the characters budget', async () => {
    // v15 is half a million characters; w0…w39 each splice it into a string of their own.
    const lines = doubling(15, 'xxxxxxxxxxxxxxxx', (before) => `${before}${before}`);
    for (let i = 0; i < 40; i++) lines.push(`  w${i}: ${i}\${self:custom.v15}`);
    lines.push(`  all: [${Array.from({ length: 40 }, (_, i) => `'\${self:custom.w${i}}'`).join(', ')}]`);
    const error = await resolveError(lines, 'custom.all');
    expect(error.message).toContain(`more than ${RESOLUTION_LIMITS.substitutedCharacters} characters in all`);
  });

  it('a list doubling through ${self:…} (2^30 nodes): refused past the steps budget', async () => {
    const error = await resolveError(
      doubling(30, '[a, b]', (before) => `['${before}', '${before}']`),
      'custom.v30',
    );
    expect(error.message).toContain(`more than ${RESOLUTION_LIMITS.steps} steps`);
  });

  it('${self:…} references 1,000 deep: refused at the nesting bound', async () => {
    const lines = [
      'custom:',
      ...Array.from({ length: 1000 }, (_, i) => `  r${i}: \${self:custom.r${i + 1}}`),
    ];
    lines.push('  r1000: end');
    const error = await resolveError(lines, 'custom.r0');
    expect(error.message).toContain(`references nest deeper than ${RESOLUTION_LIMITS.nesting}`);
  });

  it('a JSON variable file nested 200,000 deep: the file named', async () => {
    const depth = 200_000;
    const error = await resolveError(['custom:', '  deep: ${file(./deep.json)}'], 'custom.deep', {
      'deep.json': `${'['.repeat(depth)}${']'.repeat(depth)}`,
    });
    expect(error.message).toMatch(/deep\.json: nests deeper than 100 levels/);
  });

  it('a variable file that is a device (size 0, endless): refused before it is read', async () => {
    const error = await resolveError(['custom:', '  z: ${file(/dev/zero)}'], 'custom.z');
    expect(error.message).toMatch(/\/dev\/zero: is not a regular file/);
  });

  it('values nested inside values past the bound once resolved', async () => {
    // Each level is 60 deep and holds the next: within the file's bound, past it once resolved.
    const nest = (inner: string) => `${'['.repeat(60)}'${inner}'${']'.repeat(60)}`;
    const error = await resolveError(
      [
        'custom:',
        `  a: ${nest('${self:custom.b}')}`,
        `  b: ${nest('${self:custom.c}')}`,
        `  c: ${nest('${self:custom.d}')}`,
        `  d: ${nest('x')}`,
      ],
      'custom.a',
    );
    expect(error.message).toContain(`values nest deeper than ${RESOLUTION_LIMITS.nesting * 2} levels`);
  });
});
