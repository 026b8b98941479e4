import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HandlerLoadError } from '../../../../src/local/emulator/errors.js';
import {
  builtPathOf,
  loadHandler,
  resolveHandlerModule,
} from '../../../../src/local/emulator/handler-loader.js';

let dir: string;
let root: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidewater-loader-'));
  // A project that itself lives under a folder named src: only <root>/src may be rewritten.
  root = join(dir, 'src', 'proj');
  await mkdir(join(root, 'src', 'handlers'), { recursive: true });
  await mkdir(join(root, 'dist', 'handlers'), { recursive: true });
  await writeFile(join(root, 'src', 'handlers', 'h.ts'), "export const handler = () => 'source';\n");
  await writeFile(join(root, 'dist', 'handlers', 'h.js'), "export const handler = () => 'built';\n");
  await writeFile(join(root, 'src', 'handlers', 'unbuilt.ts'), "export const handler = () => 'source';\n");
  await writeFile(
    join(root, 'plain.mjs'),
    'export const handler = () => process.env.LOADER_PROBE;\nexport const value = 1;\n',
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('handler loader', () => {
  it('maps <root>/src to <root>/dist, never an earlier src folder in the path', () => {
    expect(builtPathOf('/home/me/src/proj/src/handlers/a.ts', '/home/me/src/proj')).toBe(
      '/home/me/src/proj/dist/handlers/a.js',
    );
    expect(builtPathOf('/home/me/src/proj/src/a.mts', '/home/me/src/proj')).toBe(
      '/home/me/src/proj/dist/a.mjs',
    );
    expect(builtPathOf('/home/me/src/proj/lib/a.ts', '/home/me/src/proj')).toBeUndefined();
    expect(builtPathOf('/home/me/src/other/src/a.ts', '/home/me/src/proj')).toBeUndefined();
  });

  it('loads the built JavaScript of a TypeScript source when running built, and the source otherwise', async () => {
    const file = join(root, 'src', 'handlers', 'h.ts');
    const built = await loadHandler<() => string>(file, 'handler', { root, built: true });
    expect(built()).toBe('built');
    const source = await loadHandler<() => string>(file, 'handler', { root, built: false });
    expect(source()).toBe('source');
  });

  it('imports fresh on every load, so each run reads its own environment', async () => {
    const file = join(root, 'plain.mjs');
    const first = await loadHandler<() => string | undefined>(file, 'handler', { root });
    process.env.LOADER_PROBE = 'second';
    try {
      const second = await loadHandler<() => string | undefined>(file, 'handler', { root });
      expect(second).not.toBe(first);
      expect(second()).toBe('second');
    } finally {
      delete process.env.LOADER_PROBE;
    }
  });

  it('fails with HandlerLoadError naming the fix: no esbuild for an unbuilt source, missing export, missing file', async () => {
    // No built copy, and the project has no esbuild to compile it with: say what to install, where.
    await expect(
      loadHandler(join(root, 'src', 'handlers', 'unbuilt.ts'), 'handler', { root, built: true }),
    ).rejects.toThrow(/esbuild of the service in .*not installed there.*npm install --save-dev esbuild/s);
    await expect(loadHandler(join(root, 'plain.mjs'), 'value', { root })).rejects.toThrow(
      /exports no function 'value'/,
    );
    await expect(loadHandler(join(root, 'plain.mjs'), 'nothing', { root })).rejects.toBeInstanceOf(
      HandlerLoadError,
    );
    expect(() => resolveHandlerModule('src/handlers/missing', root)).toThrow(HandlerLoadError);
  });

  it('resolves a module with or without its extension, relative to the given folder', () => {
    expect(resolveHandlerModule('src/handlers/h', root)).toBe(join(root, 'src', 'handlers', 'h.ts'));
    expect(resolveHandlerModule('plain.mjs', root)).toBe(join(root, 'plain.mjs'));
    expect(resolveHandlerModule(join(root, 'plain'), '/')).toBe(join(root, 'plain.mjs'));
  });
});
