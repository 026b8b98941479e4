// The package's entry points as package.json's `exports` names them, each with its built
// declaration file: what the layout tests read the public surface from.
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** `[entry, absolute path of its .d.ts]` for every export of package.json with `types`. */
export function packageEntries(root: string): [string, string][] {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types?: string }>;
  };
  return Object.entries(manifest.exports)
    .filter(([, target]) => typeof target === 'object' && target.types !== undefined)
    .map(([entry, target]) => [entry, path.join(root, (target as { types: string }).types)]);
}
