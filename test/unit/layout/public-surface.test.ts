// The public surface is chosen, not accumulated: every package entry's exported names (values and
// types, read from the built declarations) are pinned in public-surface.json, so a change to what
// users can import is a reviewed diff. After a deliberate change: `npm run build`, then
// `UPDATE_PUBLIC_SURFACE=1 npx vitest run test/unit/layout/public-surface.test.ts`.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const pinned = path.join(path.dirname(fileURLToPath(import.meta.url)), 'public-surface.json');

type Surface = Record<string, { values: string[]; types: string[] }>;

function entries(): [string, string][] {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types?: string }>;
  };
  return Object.entries(manifest.exports)
    .filter(([, target]) => typeof target === 'object' && target.types !== undefined)
    .map(([entry, target]) => [entry, path.join(root, (target as { types: string }).types)]);
}

function surface(): Surface {
  const list = entries();
  const program = ts.createProgram(
    list.map(([, file]) => file),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
    },
  );
  const checker = program.getTypeChecker();
  const out: Surface = {};
  for (const [entry, file] of list) {
    const source = program.getSourceFile(file);
    if (source === undefined)
      throw new Error(`${entry}: ${path.relative(root, file)} is not built (npm run build)`);
    const module = checker.getSymbolAtLocation(source);
    const values: string[] = [];
    const types: string[] = [];
    for (const symbol of module === undefined ? [] : checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      (target.flags & ts.SymbolFlags.Value ? values : types).push(symbol.name);
    }
    out[entry] = { values: values.sort(), types: types.sort() };
  }
  return out;
}

describe('the public surface', () => {
  const current = surface();

  it('reads every entry of package.json (the check is not vacuous)', () => {
    expect(Object.keys(current)).toContain('.');
    expect(current['.']!.values).toContain('createStreamHandler');
  });

  it('is what public-surface.json pins, entry by entry', () => {
    if (process.env.UPDATE_PUBLIC_SURFACE === '1')
      writeFileSync(pinned, `${JSON.stringify(current, null, 2)}\n`);
    expect(existsSync(pinned), 'public-surface.json is missing: see the top of this file').toBe(true);
    expect(current).toEqual(JSON.parse(readFileSync(pinned, 'utf8')));
  });

  it('names each thing once: no name exported by two entries', () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const [entry, { values, types }] of Object.entries(current)) {
      for (const name of [...values, ...types]) {
        const first = seen.get(name);
        if (first !== undefined && !ALLOWED_TWICE.has(name)) twice.push(`${name}: ${first} and ${entry}`);
        else seen.set(name, entry);
      }
    }
    expect(twice).toEqual([]);
  });
});

/** Names two entries both export on purpose (filled in when the surface was chosen). */
const ALLOWED_TWICE = new Set<string>([]);
