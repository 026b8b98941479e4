// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables and generated TypeScript, not template literals
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HandlerLoadError } from '../../../../src/local/emulator/errors.js';
import { loadHandler } from '../../../../src/local/emulator/handler-loader.js';

const repoEsbuild = dirname(fileURLToPath(import.meta.resolve('esbuild/package.json')));

/**
 * A user's service: a TypeScript handler outside src/ (no dist/ to fall back on) importing a
 * relative TypeScript module by its .js name, as tsc wants it, and a package from the service's
 * own node_modules. `withEsbuild`: esbuild installed in the service, as serverless-esbuild needs it.
 */
async function service(withEsbuild: boolean): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'tidewater-ts-service-'));
  await writeFile(join(root, 'package.json'), '{ "name": "svc", "type": "module" }\n');
  await mkdir(join(root, 'lambda', 'lib'), { recursive: true });
  await mkdir(join(root, 'node_modules', 'greeting'), { recursive: true });
  await writeFile(
    join(root, 'node_modules', 'greeting', 'package.json'),
    '{ "name": "greeting", "type": "module", "exports": "./index.js" }\n',
  );
  await writeFile(
    join(root, 'node_modules', 'greeting', 'index.js'),
    'export const greet = (n) => `hello ${n}`;\n',
  );
  if (withEsbuild) await symlink(repoEsbuild, join(root, 'node_modules', 'esbuild'), 'dir');
  await writeFile(
    join(root, 'lambda', 'lib', 'keys.ts'),
    'export interface Keyed { pk: string }\nexport const keyOf = (item: Keyed): string => item.pk.toUpperCase();\n',
  );
  await writeFile(
    join(root, 'lambda', 'handler.ts'),
    [
      "import { greet } from 'greeting';",
      "import { type Keyed, keyOf } from './lib/keys.js';",
      'enum Outcome { Done = "done" }',
      'const prefix: string = process.env.GREETING_PREFIX ?? "none";',
      'export async function handler(event: { items: Keyed[] }): Promise<string> {',
      '  return `${prefix} ${greet(event.items.map(keyOf).join(","))} ${Outcome.Done}`;',
      '}',
      '',
    ].join('\n'),
  );
  return root;
}

describe('a TypeScript handler outside src/ and dist/', () => {
  it("is compiled with the service's esbuild, its packages resolved from the service, the file removed after import", async () => {
    const root = await service(true);
    process.env.GREETING_PREFIX = 'cold-start';
    try {
      const handler = await loadHandler<(event: { items: { pk: string }[] }) => Promise<string>>(
        join(root, 'lambda', 'handler.ts'),
        'handler',
        { root, built: true },
      );
      expect(await handler({ items: [{ pk: 'a' }, { pk: 'b' }] })).toBe('cold-start hello A,B done');
    } finally {
      delete process.env.GREETING_PREFIX;
    }
    // Written under the service (so `greeting` resolved from its node_modules), then removed.
    expect(existsSync(join(root, '.tidewater', 'handlers'))).toBe(true);
    expect(await readdir(join(root, '.tidewater', 'handlers'))).toEqual([]);
  });

  it('says what to install, and where, when the service has no esbuild', async () => {
    const root = await service(false);
    const loading = loadHandler(join(root, 'lambda', 'handler.ts'), 'handler', { root, built: true });
    await expect(loading).rejects.toBeInstanceOf(HandlerLoadError);
    await expect(loading).rejects.toThrow(
      `lambda/handler.ts is TypeScript, and tidewater compiles it with the esbuild of the service in ${root}`,
    );
    await expect(loading).rejects.toThrow(/Run `npm install --save-dev esbuild` in that folder/);
  });

  it('reports a compile error with its file and line', async () => {
    const root = await service(true);
    await writeFile(join(root, 'lambda', 'broken.ts'), 'export const handler = () => {\n  return (;\n};\n');
    await expect(
      loadHandler(join(root, 'lambda', 'broken.ts'), 'handler', { root, built: true }),
    ).rejects.toThrow(/esbuild could not compile .*broken\.ts: lambda\/broken\.ts:2: /);
  });
});
