/**
 * Module hooks for the suite processes: every import that resolves into src/ is served from the
 * tsc build in dist/ instead, so tidewater is timed as it ships (plain JS, like the peers in
 * node_modules), not as tsx compiles it on the fly (esbuild with keepNames, which wraps every
 * closure creation in a naming helper). bench/run.ts builds dist/ first.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SRC = new URL('../../src/', import.meta.url).href;
const DIST = new URL('../../dist/', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  if (!result.url.startsWith(SRC)) return result;
  const url = DIST + result.url.slice(SRC.length).replace(/\.ts$/, '.js');
  if (!existsSync(fileURLToPath(url))) {
    throw new Error(`${url} is missing: run \`npm run build\` before benchmarking against dist/`);
  }
  return { url, format: 'module', shortCircuit: true };
}
