// The shape of src/ stays one-way: no module reaches itself through its imports, type-only imports
// included (a type cycle today is a value cycle after the next refactor, and a top-level constant
// on a value cycle throws at load).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return /\.(c|m)?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [file] : [];
  });
}

/** Each module's relative imports and re-exports, resolved to files of src/. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((imported) => imported.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) =>
        path.resolve(path.dirname(file), name).replace(/\.(c|m)?js$/, (ext) => ext.replace('js', 'ts')),
      )
      .filter((target) => known.has(target));
    graph.set(file, targets);
  }
  return graph;
}

/** Every strongly connected set of more than one module (or a module importing itself). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(path.relative(src, w));
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('src/ imports', () => {
  const graph = importGraph(sourceFiles(src));

  it('reads the modules it checks (the check is not vacuous)', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get(path.join(src, 'pipeline/engine.ts'))).toContain(path.join(src, 'pipeline/ledger.ts'));
  });

  it('form no cycle anywhere', () => {
    expect(cycles(graph)).toEqual([]);
  });

  // The archive's S3 layout (src/archive) sits under the sinks: S3ArchiveSink and FileSink write it
  // through archive/, so archive/ never imports sinks/ (no folder cycle for a module cycle to grow from).
  it('keep the archive below the sinks: nothing in src/archive imports src/sinks', () => {
    const archive = [...graph].filter(([file]) => file.startsWith(path.join(src, 'archive') + path.sep));
    expect(archive.length).toBeGreaterThan(10);
    const upward = archive.flatMap(([file, targets]) =>
      targets
        .filter((target) => target.startsWith(path.join(src, 'sinks') + path.sep))
        .map((target) => `${path.relative(src, file)} -> ${path.relative(src, target)}`),
    );
    expect(upward).toEqual([]);
    expect(graph.get(path.join(src, 'sinks/s3-archive-sink.ts'))).toContain(
      path.join(src, 'archive/objects.ts'),
    );
  });

  it('would name a cycle with its modules', () => {
    const a = path.join(src, 'a.ts');
    const b = path.join(src, 'b.ts');
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts']]);
  });
});
