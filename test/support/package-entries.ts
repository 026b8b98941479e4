// The package's entry points as package.json's `exports` names them, each with its built
// declaration file: what the layout tests read the public surface from.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** `[entry, absolute path of its .d.ts]` for every export of package.json with `types`. */
export function packageEntries(root: string): [string, string][] {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types?: string }>;
  };
  return Object.entries(manifest.exports)
    .filter(([, target]) => typeof target === 'object' && target.types !== undefined)
    .map(([entry, target]) => [entry, path.join(root, (target as { types: string }).types)]);
}

/** The entries' declarations compiled as a consumer's NodeNext project reads them, and their checker. */
export function packageProgram(root: string) {
  const list = packageEntries(root);
  const program = ts.createProgram(
    list.map(([, file]) => file),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
    },
  );
  return { list, program, checker: program.getTypeChecker() };
}
