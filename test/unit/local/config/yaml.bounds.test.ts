// Issue 36 §4: YAML nested 200,000 deep (flow) or a thousand deep (block) is refused, the file
// named, before the `yaml` package's composer overflows the stack or spends seconds on it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerlessConfigError, TemplateReadError } from '../../../../src/local/config/errors.js';
import { MAX_NESTING_DEPTH } from '../../../../src/local/config/nesting.js';
import { readSamTemplate } from '../../../../src/local/config/sam-template.js';
import { loadServerlessConfig } from '../../../../src/local/config/serverless-config.js';
import { parseServerlessYaml } from '../../../../src/local/config/yaml.js';
import { tempDirs, thrownBy } from './reader-kit.js';

const temp = tempDirs('tidewater-yaml-bounds-');
afterEach(() => temp.clean());

const DEEP = {
  'flow lists 200,000 deep': `Resources: ${'['.repeat(200_000)}${']'.repeat(200_000)}\n`,
  'flow maps 200,000 deep': `Resources: ${'{a: '.repeat(200_000)}b${'}'.repeat(200_000)}\n`,
  'block maps 1,000 deep': `Resources:\n${Array.from({ length: 1000 }, (_, i) => `${' '.repeat(i + 1)}k${i}:`).join('\n')} x\n`,
  'aliases nesting a deep list in itself': `a: &a ${'['.repeat(60)}x${']'.repeat(60)}\nb: &b [*a, [*a]]\nc: ${'['.repeat(50)}*b${']'.repeat(50)}\n`,
};

describe('parseServerlessYaml: nesting bounded', () => {
  it.each(Object.entries(DEEP))('%s: refused, the file named', (_what, text) => {
    expect(() => parseServerlessYaml(text, 'deep.yml')).toThrow(
      `deep.yml nests deeper than ${MAX_NESTING_DEPTH} levels`,
    );
  });

  it('a [ inside a quoted or plain scalar is not nesting', () => {
    const scalars = Array.from({ length: 200 }, (_, i) => `k${i}: "[[[" # [[[\nq${i}: x[[[`).join('\n');
    expect(parseServerlessYaml(scalars)).toMatchObject({ k0: '[[[', q199: 'x[[[' });
  });

  it('serverless.yml and a SAM template so nested end in their typed errors', async () => {
    const dir = temp.make();
    const file = join(dir, 'template.yaml');
    writeFileSync(file, DEEP['flow lists 200,000 deep']);
    expect(thrownBy(TemplateReadError, () => readSamTemplate(file)).message).toMatch(/nests deeper/);
    await expect(loadServerlessConfig({ file })).rejects.toBeInstanceOf(ServerlessConfigError);
  });
});
