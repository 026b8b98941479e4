// The public surface is chosen, not accumulated: every package entry's exported names (values and
// types, read from the built declarations) are pinned in public-surface.json, so a change to what
// users can import is a reviewed diff. After a deliberate change: `npm run build`, then
// `UPDATE_PUBLIC_SURFACE=1 npx vitest run test/unit/layout/public-surface.test.ts`.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { packageProgram } from '../../support/package-entries.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const pinned = path.join(path.dirname(fileURLToPath(import.meta.url)), 'public-surface.json');

type Surface = Record<string, { values: string[]; types: string[] }>;

function surface(): Surface {
  const { list, program, checker } = packageProgram(root);
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

  // Each entry exports what its docs document: every value a user can import (a function, a class,
  // a constant) is named in README.md or docs/*.md. Types ride along with the values they describe.
  it('documents every value an entry exports (README.md or docs/*.md names it)', () => {
    const docs = [path.join(root, 'README.md'), ...docFiles()]
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const undocumented = Object.entries(current).flatMap(([entry, { values }]) =>
      values
        .filter((name) => !new RegExp(`\\b${name.replace(/\$/g, '\\$')}\\b`).test(docs))
        .map((name) => `${entry}: ${name}`),
    );
    expect(undocumented).toEqual([]);
    expect(docs).toContain('createStreamHandler');
  });
});

function docFiles(): string[] {
  const dir = path.join(root, 'docs');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join(dir, name));
}

/**
 * Names two entries both export on purpose: a moved export stays in its old entry for one minor
 * version as a value that throws naming the new one (src/core/moved-export.ts, docs/upgrading.md).
 */
const ALLOWED_TWICE = new Set<string>([
  'InjectedSinkFailure',
  'StreamEventBuilder',
  'streamEvents',
  'createLambdaContext',
  'tenantFromPartitionKey',
  'InvalidTenantError',
  'createJsonLogger',
  'fromPowertoolsLogger',
  'toLogSafe',
]);
