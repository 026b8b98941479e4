// The shape of src/ stays one-way: no module reaches itself through its imports, type-only imports
// included (a type cycle today is a value cycle after the next refactor, and a top-level constant
// on a value cycle throws at load); and each room imports only the rooms beneath it.
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

/**
 * What each room of src/ may import besides itself: data flows records → filters → pipeline →
 * sinks, the archive's S3 layout sits under the sinks that write it, Lambda's own contracts
 * (lambda/) under everything that invokes or emulates a function, and only the CLI and src/local
 * know that emulators exist. The package entries (src/*.ts) and the CLI compose the rooms.
 */
const ROOMS: Record<string, readonly string[]> = {
  core: [],
  records: ['core'],
  lambda: ['core'],
  logging: ['core', 'records'],
  filters: ['core', 'records'],
  archive: ['core', 'records'],
  sinks: ['core', 'records', 'archive'],
  pipeline: ['core', 'records', 'filters', 'logging', 'sinks'],
  idempotency: ['core', 'records', 'pipeline', 'sinks'],
  backfill: ['core', 'records', 'pipeline', 'sinks'],
  redrive: ['core', 'records', 'lambda', 'sinks'],
  // A replay delivers as backfill does (its batches, retries and checkpoint file), from archive/'s reader.
  history: ['core', 'records', 'archive', 'pipeline', 'backfill'],
  votes: ['core'],
  // A handler composes as a user's does, partly from the package entries (tidewater/s3, /sqs).
  handlers: ['core', 'archive', 'backfill', 'pipeline', 'sinks', 'votes', 'entry'],
  cdk: ['core', 'archive', 'filters', 'handlers', 'votes'],
  local: ['core', 'records', 'lambda', 'filters', 'pipeline'],
};

/** The room of a module of src/: its first folder, `entry` for a package entry (src/*.ts). */
function roomOf(file: string): string {
  const [first, ...rest] = path.relative(src, file).split(path.sep);
  return rest.length === 0 ? 'entry' : (first as string);
}

/** Imports from one room into a room it may not import, and modules in rooms ROOMS does not list. */
function roomViolations(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    const room = roomOf(file);
    // The entries and the CLI compose the rooms: they may import any of them.
    if (room === 'entry' || room === 'cli') continue;
    const allowed = ROOMS[room];
    if (allowed === undefined) {
      found.push(`${path.relative(src, file)}: a room the table does not list`);
      continue;
    }
    for (const target of targets) {
      const to = roomOf(target);
      if (to !== room && !allowed.includes(to))
        found.push(`${path.relative(src, file)} -> ${path.relative(src, target)}`);
    }
  }
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

  it('go only from a room to the rooms beneath it', () => {
    expect(roomViolations(graph)).toEqual([]);
    // The rule reads real edges: the S3 archive sink writes the archive's layout through archive/.
    expect(graph.get(path.join(src, 'sinks/s3-archive-sink.ts'))).toContain(
      path.join(src, 'archive/objects.ts'),
    );
  });

  it('would name an import that goes up, or into a room the table does not know', () => {
    const from = path.join(src, 'redrive/target.ts');
    const local = path.join(src, 'local/emulator/emulator.ts');
    const unknown = path.join(src, 'nowhere/x.ts');
    expect(
      roomViolations(
        new Map([
          [from, [local, path.join(src, 'lambda/context.ts')]],
          [unknown, []],
        ]),
      ),
    ).toEqual([
      'redrive/target.ts -> local/emulator/emulator.ts',
      'nowhere/x.ts: a room the table does not list',
    ]);
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
