// Every name a package entry exports has a TSDoc summary line (issue 38, item 17): the API
// reference (`npm run docs:api`, TypeDoc) is generated from these comments, so an export without
// one is a blank page there. Read from the built declarations, as public-surface.test.ts reads
// them: `npm run build` first.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { packageProgram } from '../../support/package-entries.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The first line of a declaration's own TSDoc, or '' when it has none. */
function summaryOf(declaration: ts.Declaration): string {
  // A variable's comment sits on its statement, not on the declaration inside it.
  const holder = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
  const docs = ts.getJSDocCommentsAndTags(holder).filter(ts.isJSDoc);
  const text = docs.at(-1)?.comment;
  const summary = typeof text === 'string' ? text : (text?.map((part) => part.text).join('') ?? '');
  return summary.trim().split('\n')[0] ?? '';
}

function undocumentedExports(): { checked: number; missing: string[] } {
  const { list, program, checker } = packageProgram(root);
  const missing: string[] = [];
  let checked = 0;
  for (const [entry, file] of list) {
    const source = program.getSourceFile(file);
    if (source === undefined)
      throw new Error(`${entry}: ${path.relative(root, file)} is not built (npm run build)`);
    const module = checker.getSymbolAtLocation(source);
    for (const symbol of module === undefined ? [] : checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const declarations = target.declarations ?? [];
      checked += 1;
      // An overloaded function or a merged declaration counts as documented when one part is.
      if (!declarations.some((declaration) => summaryOf(declaration) !== ''))
        missing.push(
          `${entry}: ${symbol.name} (${path.relative(root, declarations[0]?.getSourceFile().fileName ?? '?')})`,
        );
    }
  }
  return { checked, missing };
}

describe('TSDoc summary lines', () => {
  it('every export of every package entry has one', () => {
    const { checked, missing } = undocumentedExports();
    expect(checked).toBeGreaterThan(300);
    expect(missing).toEqual([]);
  });
});
