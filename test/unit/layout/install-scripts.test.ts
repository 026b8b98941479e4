// Issue 38, item 11: `npm install` is quiet and reproducible. Every package of the lockfile that
// has an install script is allowed or denied, by name, in package.json's `allowScripts` (npm 11
// warns about the others and npm 12 skips them), and the consumer's side — the orders service and
// README's Install section — declares the same decisions for the same packages.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const json = (file: string) => JSON.parse(readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8'));

/** Names of the lockfile's packages npm marks `hasInstallScript`. */
function withInstallScripts(lock: { packages: Record<string, { hasInstallScript?: boolean }> }): string[] {
  const names = Object.entries(lock.packages)
    .filter(([key, entry]) => key !== '' && entry.hasInstallScript === true)
    .map(([key]) => key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length));
  return [...new Set(names)].sort();
}

describe('install scripts', () => {
  const manifest = json('package.json') as { allowScripts?: Record<string, boolean> };
  const decided = Object.keys(manifest.allowScripts ?? {}).sort();

  it("package.json's allowScripts decides every install script of package-lock.json, and nothing else", () => {
    const scripted = withInstallScripts(json('package-lock.json'));
    expect(scripted.length).toBeGreaterThan(0);
    expect(decided).toEqual(scripted);
  });

  it('runs only what a build or a local server needs: esbuild and leveldown (kinesalite) allowed', () => {
    expect(manifest.allowScripts).toEqual({
      esbuild: true,
      leveldown: true,
      '@parcel/watcher': false,
      'es5-ext': false,
    });
  });

  it('the consumer side declares the same decisions: the orders service and README', () => {
    expect(json('examples/orders-service/package.json').allowScripts).toEqual(manifest.allowScripts);
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const block = /```json\n\s*(\{\s*"allowScripts"[\s\S]*?)\n\s*```/.exec(readme);
    expect(block, 'README.md has a json block with allowScripts').not.toBeNull();
    expect(JSON.parse(block![1]!).allowScripts).toEqual(manifest.allowScripts);
  });
});
