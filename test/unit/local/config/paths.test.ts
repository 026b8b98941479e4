import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TidewaterError } from '../../../../src/core/index.js';
import { TemplateReadError } from '../../../../src/local/config/errors.js';
import { projectRoot, resolveInside, resolveModuleInside } from '../../../../src/local/config/paths.js';
import { tempDirs, thrownBy } from './reader-kit.js';

const temp = tempDirs('tidewater-paths-');
afterEach(() => temp.clean());

const fail = (detail: string) => new TemplateReadError('t.json', 'Fn', 'Code', detail);

function refusal(run: () => unknown): TemplateReadError {
  return thrownBy(TemplateReadError, run);
}

describe('resolveInside', () => {
  it('resolves a path inside the root, from the root or from a folder in it', () => {
    const root = temp.make();
    mkdirSync(join(root, 'stage'));
    expect(resolveInside(root, 'a/b.json', fail)).toBe(join(root, 'a', 'b.json'));
    expect(resolveInside(root, '../asset.x', fail, join(root, 'stage'))).toBe(join(root, 'asset.x'));
    expect(resolveInside(root, join(root, 'abs.json'), fail)).toBe(join(root, 'abs.json'));
  });

  it.each([
    ['a ../ path', '../../etc/passwd'],
    ['an absolute path elsewhere', '/etc/passwd'],
    ['a NUL character', 'a\0b'],
  ])('refuses %s with the reader’s typed error', (_what, path) => {
    const root = temp.make();
    const error = refusal(() => resolveInside(root, path, fail));
    expect(error).toBeInstanceOf(TidewaterError);
    expect(error.property).toBe('Code');
    expect(error.file).toBe('t.json');
  });

  it('refuses a symbolic link inside the root that points outside it, file or folder', () => {
    const root = temp.make();
    const elsewhere = temp.make();
    writeFileSync(join(elsewhere, 'secret.js'), '');
    symlinkSync(elsewhere, join(root, 'linked'));
    symlinkSync(join(elsewhere, 'secret.js'), join(root, 'index.js'));
    expect(refusal(() => resolveInside(root, 'linked/secret.js', fail)).message).toMatch(/symbolic link/);
    expect(refusal(() => resolveInside(root, 'linked/missing/deeper', fail)).message).toMatch(
      /symbolic link/,
    );
    // A handler module names no file itself: each file it may be is checked.
    expect(refusal(() => resolveModuleInside(root, 'index', fail)).message).toMatch(/symbolic link/);
  });

  it('takes a link that stays inside the root', () => {
    const root = temp.make();
    mkdirSync(join(root, 'real'));
    symlinkSync(join(root, 'real'), join(root, 'alias'));
    expect(resolveInside(root, 'alias/x', fail)).toBe(join(root, 'alias', 'x'));
  });
});

describe('projectRoot', () => {
  it('is the nearest folder with a package.json, else the folder itself', () => {
    const root = temp.make();
    mkdirSync(join(root, 'services', 'orders'), { recursive: true });
    expect(projectRoot(join(root, 'services', 'orders'))).toBe(join(root, 'services', 'orders'));
    writeFileSync(join(root, 'package.json'), '{}');
    expect(projectRoot(join(root, 'services', 'orders'))).toBe(root);
  });
});
