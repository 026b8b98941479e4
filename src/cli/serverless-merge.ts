// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables, not template literals
import { isDeepStrictEqual } from 'node:util';
import { parseServerlessYaml } from '../local/config/yaml.js';

/**
 * Adds tidewater's pieces (a plugin, custom.esbuild, a function, resources entries) to a user's
 * serverless.yml by inserting text, so every comment and every line of theirs stays as it was.
 * The result is parsed and must equal their file plus exactly those pieces; anything this cannot
 * do that way (flow style, a name already taken, resources: as one mapping…) is reported as not
 * mergeable, and the caller writes the pieces to a separate file instead.
 */

/** One piece of tidewater's serverless.yml, as its template holds it. */
export interface ServerlessPieces {
  /** `plugins:` entries. */
  plugins: string[];
  /** Blocks under `custom:`, by key (`esbuild`). */
  custom: Record<string, Piece>;
  /** Blocks under `functions:`, by key (`archive`). */
  functions: Record<string, Piece>;
  /** `resources:` list entries (`${file(./infra/x.yml)}`), text and value. */
  resources: { text: string; value: unknown }[];
  /** Logical ids the resources declare, to refuse a merge into a file that declares them too. */
  logicalIds: string[];
}

interface Piece {
  /** The block's lines as the template writes them, its key line first, without indentation. */
  lines: string[];
  value: unknown;
}

export type MergeResult =
  | { kind: 'unchanged' }
  | { kind: 'merged'; text: string; added: string[] }
  | { kind: 'unmergeable'; reason: string; missing: ServerlessPieces; added: string[] };

interface Line {
  text: string;
  indent: number;
  kind: 'blank' | 'comment' | 'content';
}

interface Section {
  key: string;
  /** The key line. */
  start: number;
  /** The next top-level key line (or the end). */
  end: number;
  /** Text after `key:` on its line, comment removed. */
  inline: string;
}

const KEY_LINE = /^(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_$.-]+))[ \t]*:(?:[ \t]+(.*))?$/;

class NotMergeable extends Error {}

function analyse(text: string): Line[] {
  return text.split(/\r?\n/).map((raw) => {
    const body = raw.replace(/\s+$/, '');
    const indent = body.length - body.trimStart().length;
    const kind = body === '' ? 'blank' : body.trimStart().startsWith('#') ? 'comment' : 'content';
    return { text: raw, indent, kind };
  });
}

function stripComment(value: string): string {
  return value.startsWith('#') ? '' : value.replace(/\s+#.*$/, '').trim();
}

/** The file's top-level keys and their line ranges; throws NotMergeable for what is not plain block YAML. */
function sections(lines: readonly Line[]): Section[] {
  const out: Section[] = [];
  lines.forEach((line, i) => {
    if (line.kind !== 'content' || line.indent > 0) return;
    // A sequence written at the key's own indentation (`plugins:\n- a`) belongs to that key.
    if (line.text.startsWith('- ') || line.text === '-') {
      if (!out.length) throw new NotMergeable('the file is a YAML list, not a mapping');
      return;
    }
    if (line.text.startsWith('---') || line.text.startsWith('...'))
      throw new NotMergeable('it holds several YAML documents');
    const match = KEY_LINE.exec(line.text.replace(/\s+$/, ''));
    if (!match) throw new NotMergeable(`line ${i + 1} is not a plain \`key:\` line`);
    const previous = out.at(-1);
    if (previous) previous.end = i;
    out.push({
      key: match[1] ?? match[2] ?? (match[3] as string),
      start: i,
      end: lines.length,
      inline: stripComment(match[4] ?? ''),
    });
  });
  return out;
}

/** Where to insert into a section: after its last content line, before comments that lead the next key. */
function insertionPoint(lines: readonly Line[], section: Section): number {
  let last = section.start;
  for (let i = section.start + 1; i < section.end; i++) if (lines[i]?.kind === 'content') last = i;
  return last + 1;
}

/** The indentation of a block section's entries (the first content line under its key). */
function childIndent(lines: readonly Line[], section: Section): number | undefined {
  for (let i = section.start + 1; i < section.end; i++) {
    const line = lines[i] as Line;
    if (line.kind === 'content') return line.text.startsWith('-') && line.indent === 0 ? 0 : line.indent;
  }
  return undefined;
}

function indentLines(lines: readonly string[], indent: number): string[] {
  return lines.map((line) => (line === '' ? '' : `${' '.repeat(indent)}${line}`));
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The pieces of tidewater's serverless.yml template, cut out of its text. */
export function templatePieces(
  templateText: string,
  resourceLogicalIds: readonly string[],
): ServerlessPieces {
  const lines = analyse(templateText);
  const parsed = parseServerlessYaml(templateText) as Record<string, unknown>;
  const all = sections(lines);
  const sectionOf = (key: string) => {
    const found = all.find((s) => s.key === key);
    if (!found) throw new Error(`the serverless.yml template has no ${key}:`);
    return found;
  };
  const blocks = (key: string): Record<string, Piece> => {
    const section = sectionOf(key);
    const indent = childIndent(lines, section) ?? 2;
    const out: Record<string, Piece> = {};
    let current: { key: string; lines: string[] } | undefined;
    const finish = () => {
      if (!current) return;
      while (current.lines.at(-1) === '') current.lines.pop();
      out[current.key] = {
        lines: current.lines,
        value: (parsed[key] as Record<string, unknown>)[current.key],
      };
    };
    let leading: string[] = [];
    for (let i = section.start + 1; i < section.end; i++) {
      const line = lines[i] as Line;
      const text = line.text.slice(Math.min(indent, line.indent));
      if (line.kind === 'content' && line.indent === indent) {
        finish();
        current = {
          key: (KEY_LINE.exec(text.trimEnd()) as RegExpExecArray).slice(1, 4).find(Boolean) as string,
          lines: [...leading, text],
        };
        leading = [];
      } else if (line.kind === 'comment' && line.indent === indent) {
        // A comment at the entries' indentation introduces the next entry.
        leading.push(text);
      } else if (current) {
        current.lines.push(...leading, line.kind === 'blank' ? '' : text);
        leading = [];
      }
    }
    finish();
    return out;
  };
  const resources = sectionOf('resources');
  const resourceLines = lines
    .slice(resources.start + 1, resources.end)
    .filter((l) => l.kind === 'content')
    .map((l) => l.text.trim());
  return {
    plugins: parsed.plugins as string[],
    custom: blocks('custom'),
    functions: blocks('functions'),
    resources: resourceLines.map((text, i) => ({ text, value: (parsed.resources as unknown[])[i] })),
    logicalIds: [...resourceLogicalIds],
  };
}

/** What `pieces` the file still lacks, and whether the ones it has are tidewater's. */
function missingPieces(
  file: Record<string, unknown>,
  pieces: ServerlessPieces,
): { missing: ServerlessPieces; conflicts: string[] } {
  const conflicts: string[] = [];
  const plugins = file.plugins;
  const custom = file.custom;
  const functions = file.functions;
  const resources = file.resources;
  const missing: ServerlessPieces = {
    plugins: pieces.plugins.filter((p) => !(Array.isArray(plugins) && plugins.includes(p))),
    custom: {},
    functions: {},
    resources: pieces.resources.filter(
      (r) =>
        !(Array.isArray(resources) && resources.some((existing) => isDeepStrictEqual(existing, r.value))),
    ),
    logicalIds: pieces.logicalIds,
  };
  for (const [key, piece] of Object.entries(pieces.custom))
    if (!(isMapping(custom) && key in custom)) missing.custom[key] = piece;
  for (const [key, piece] of Object.entries(pieces.functions)) {
    const existing = isMapping(functions) ? functions[key] : undefined;
    if (existing === undefined) missing.functions[key] = piece;
    else if (!isDeepStrictEqual(existing, piece.value)) {
      const handler = (piece.value as { handler?: unknown }).handler;
      if (!isMapping(existing) || existing.handler !== handler)
        conflicts.push(`functions.${key} exists with another handler (tidewater's is ${String(handler)})`);
    }
  }
  // Logical ids already declared inline would collide with tidewater's resources.
  const inline = (Array.isArray(resources) ? resources : [resources]).flatMap((part) =>
    isMapping(part) && isMapping(part.Resources) ? Object.keys(part.Resources) : [],
  );
  if (missing.resources.length) {
    for (const id of pieces.logicalIds)
      if (inline.includes(id)) conflicts.push(`resources: already declares ${id}`);
  }
  return { missing, conflicts };
}

export function describePieces(pieces: ServerlessPieces): string[] {
  return [
    ...pieces.plugins.map((p) => `plugins: ${p}`),
    ...Object.keys(pieces.custom).map((k) => `custom.${k}`),
    ...Object.keys(pieces.functions).map((k) => `functions.${k}`),
    ...pieces.resources.map((r) => `resources: ${r.text.replace(/^- /, '')}`),
  ];
}

/** The value the file should parse to once the pieces are in. */
function expectedValue(file: Record<string, unknown>, missing: ServerlessPieces): Record<string, unknown> {
  const out = structuredClone(file);
  if (missing.plugins.length) out.plugins = [...((out.plugins as unknown[]) ?? []), ...missing.plugins];
  for (const [group, blocks] of [
    ['custom', missing.custom],
    ['functions', missing.functions],
  ] as const) {
    if (!Object.keys(blocks).length) continue;
    const target = (out[group] ?? {}) as Record<string, unknown>;
    for (const [key, piece] of Object.entries(blocks)) target[key] = structuredClone(piece.value);
    out[group] = target;
  }
  if (missing.resources.length)
    out.resources = [...((out.resources as unknown[]) ?? []), ...missing.resources.map((r) => r.value)];
  return out;
}

/** Merges what `pieces` the file lacks into its text; see the module comment. */
export function mergeServerlessYaml(text: string, pieces: ServerlessPieces): MergeResult {
  let parsed: unknown;
  try {
    parsed = parseServerlessYaml(text);
  } catch (error) {
    return {
      kind: 'unmergeable',
      reason: `it does not parse: ${(error as Error).message.split('\n')[0]}`,
      missing: pieces,
      added: describePieces(pieces),
    };
  }
  if (!isMapping(parsed))
    return {
      kind: 'unmergeable',
      reason: 'it is not a YAML mapping',
      missing: pieces,
      added: describePieces(pieces),
    };
  const { missing, conflicts } = missingPieces(parsed, pieces);
  const added = describePieces(missing);
  if (conflicts.length) return { kind: 'unmergeable', reason: conflicts.join('; '), missing, added };
  if (added.length === 0) return { kind: 'unchanged' };
  try {
    const merged = insertPieces(text, parsed, missing);
    let reparsed: unknown;
    try {
      reparsed = parseServerlessYaml(merged);
    } catch {
      throw new NotMergeable('inserting the pieces as text would not give valid YAML');
    }
    if (!isDeepStrictEqual(reparsed, expectedValue(parsed, missing)))
      throw new NotMergeable('inserting the pieces as text would change more than the pieces');
    return { kind: 'merged', text: merged, added };
  } catch (error) {
    if (!(error instanceof NotMergeable)) throw error;
    return { kind: 'unmergeable', reason: error.message, missing, added };
  }
}

function insertPieces(text: string, parsed: Record<string, unknown>, missing: ServerlessPieces): string {
  const lines = analyse(text);
  const all = sections(lines);
  /** Insertions by line index; appended sections go at the end. */
  const inserts = new Map<number, string[]>();
  const appended: string[][] = [];
  const insertAt = (at: number, block: string[]) => inserts.set(at, [...(inserts.get(at) ?? []), ...block]);

  const list = (key: string, items: string[], kind: 'plugins' | 'resources') => {
    if (!items.length) return;
    const section = all.find((s) => s.key === key);
    if (!section) {
      appended.push([`${key}:`, ...indentLines(items, 2)]);
      return;
    }
    const value = parsed[key];
    if (section.inline !== '' || !(Array.isArray(value) || value === null))
      throw new NotMergeable(
        kind === 'resources'
          ? 'its resources: is a mapping, and tidewater adds `${file(...)}` list entries (serverless v3 takes a list of files and mappings there)'
          : `its ${key}: is not a block list`,
      );
    insertAt(insertionPoint(lines, section), indentLines(items, childIndent(lines, section) ?? 2));
  };
  const mapping = (key: string, blocks: Record<string, Piece>) => {
    const pieces = Object.values(blocks);
    if (!pieces.length) return;
    const section = all.find((s) => s.key === key);
    if (!section) {
      appended.push([`${key}:`, ...pieces.flatMap((p) => indentLines(p.lines, 2))]);
      return;
    }
    if (section.inline !== '' || !(isMapping(parsed[key]) || parsed[key] === null))
      throw new NotMergeable(`its ${key}: is not a block mapping`);
    const indent = childIndent(lines, section) ?? 2;
    if (indent === 0) throw new NotMergeable(`its ${key}: has no indented entries`);
    insertAt(
      insertionPoint(lines, section),
      pieces.flatMap((p) => indentLines(p.lines, indent)),
    );
  };

  list(
    'plugins',
    missing.plugins.map((p) => `- ${p}`),
    'plugins',
  );
  mapping('custom', missing.custom);
  mapping('functions', missing.functions);
  list(
    'resources',
    missing.resources.map((r) => r.text),
    'resources',
  );

  const out: string[] = [];
  lines.forEach((line, i) => {
    out.push(...(inserts.get(i) ?? []));
    out.push(line.text);
  });
  out.push(...(inserts.get(lines.length) ?? []));
  if (appended.length) {
    while (out.length && out.at(-1) === '') out.pop();
    for (const block of appended) out.push('', ...block);
    out.push('');
  }
  return out.join(text.includes('\r\n') ? '\r\n' : '\n');
}
