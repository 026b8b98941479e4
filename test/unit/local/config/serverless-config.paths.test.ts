// Issue 36 §5: a serverless.yml function's handler stays inside the service's project, or the
// read refuses with a ServerlessConfigError naming the function's handler setting.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerlessConfigError } from '../../../../src/local/config/errors.js';
import { loadServerlessConfig } from '../../../../src/local/config/serverless-config.js';
import { tempDirs } from './reader-kit.js';

const temp = tempDirs('tidewater-sls-paths-');
afterEach(() => temp.clean());

async function handlerOf(handler: string, link?: (service: string, outside: string) => void) {
  const root = temp.make();
  const service = join(root, 'service');
  const outside = join(root, 'outside');
  mkdirSync(join(service, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(service, 'package.json'), '{}');
  for (const folder of [join(service, 'src'), outside])
    writeFileSync(join(folder, 'h.mjs'), 'export const handler = async () => ({});\n');
  link?.(service, outside);
  writeFileSync(
    join(service, 'serverless.yml'),
    `service: s\nfunctions:\n  f:\n    handler: ${JSON.stringify(handler)}\n`,
  );
  const config = await loadServerlessConfig({ file: join(service, 'serverless.yml') });
  return { service, outside, settings: () => config.functionSettings('f') };
}

describe('ServerlessConfig: handlers stay inside the project', () => {
  it('takes a handler inside the project', async () => {
    const { service, settings } = await handlerOf('src/h.handler');
    expect((await settings()).handlerModule).toBe(join(service, 'src', 'h'));
  });

  it.each([
    ['a ../ path', '../outside/h.handler'],
    ['an absolute path', '/etc/passwd.handler'],
  ])('refuses %s', async (_what, handler) => {
    const { settings } = await handlerOf(handler);
    const error = await settings().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServerlessConfigError);
    expect((error as Error).message).toMatch(/functions\.f\.handler: .* leads outside/);
  });

  it('refuses a handler file that is a link to a file outside', async () => {
    const { settings } = await handlerOf('src/linked.handler', (service, outside) =>
      symlinkSync(join(outside, 'h.mjs'), join(service, 'src', 'linked.mjs')),
    );
    await expect(settings()).rejects.toThrow(/functions\.f\.handler: .*symbolic link/);
  });
});
