import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../core/write-file-atomic.js';
import type { AttributeMap } from '../records/types.js';
import { CheckpointMismatchError, InvalidCheckpointError } from './errors.js';

/** How far one data file is: its first `line` lines are done. */
export interface FileCheckpoint {
  line: number;
  done: boolean;
}

/** How far one Scan segment is: the key of its last item done (the next Scan's ExclusiveStartKey). */
export interface SegmentCheckpoint {
  after: AttributeMap | null;
  items: number;
  done: boolean;
}

/**
 * A backfill's checkpoint file: which export or scan it is for (`source`), and per data file or
 * segment how far it is. Everything before a recorded position has been delivered or dead-lettered,
 * so a rerun continues from there and a sink sees each item at least once.
 */
export interface BackfillCheckpoint {
  version: 1;
  /** `export <exportArn>` or `scan <table> segments <n>`. */
  source: string;
  files: Record<string, FileCheckpoint>;
  segments: Record<string, SegmentCheckpoint>;
}

const VERSION = 1;

/** A name from the file, quoted and cut short for a message: the file may hold anything. */
function quoted(name: string): string {
  return JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

// An ExclusiveStartKey: attribute names to one attribute value each (`{"S": …}`), at most two.
function isKey(v: unknown): v is AttributeMap {
  if (!isPlainObject(v)) return false;
  const names = Object.keys(v);
  return names.length > 0 && names.length <= 2 && names.every((n) => isPlainObject(v[n]));
}

/** The entries of `value` (a JSON object) checked by `entry`, in a map that has no prototype. */
function entries<T>(
  value: unknown,
  what: string,
  file: string,
  entry: (name: string, v: Record<string, unknown>) => T | undefined,
): Record<string, T> {
  if (!isPlainObject(value)) throw new InvalidCheckpointError(file, `${what} is not an object`);
  // Names come from the file: `__proto__` must be an entry like any other, never a prototype.
  const out: Record<string, T> = Object.create(null);
  for (const name of Object.keys(value)) {
    const v = value[name];
    const checked = isPlainObject(v) ? entry(name, v) : undefined;
    if (checked === undefined)
      throw new InvalidCheckpointError(file, `${what} entry ${quoted(name)} is not one a backfill writes`);
    out[name] = checked;
  }
  return out;
}

/** The checkpoint in `value` (parsed JSON), every entry checked before anything is delivered. */
function checkedCheckpoint(value: unknown, file: string): BackfillCheckpoint {
  if (!isPlainObject(value) || value.version !== VERSION || typeof value.source !== 'string')
    throw new InvalidCheckpointError(file, `not a backfill checkpoint (version ${VERSION})`);
  return {
    version: VERSION,
    source: value.source,
    files: entries(value.files, 'files', file, (_, e) =>
      isCount(e.line) && typeof e.done === 'boolean' ? { line: e.line, done: e.done } : undefined,
    ),
    segments: entries(value.segments, 'segments', file, (name, e) =>
      /^(0|[1-9]\d{0,6})$/.test(name) &&
      (e.after === null || isKey(e.after)) &&
      isCount(e.items) &&
      typeof e.done === 'boolean'
        ? { after: e.after as AttributeMap | null, items: e.items, done: e.done }
        : undefined,
    ),
  };
}

function fresh(source: string): BackfillCheckpoint {
  return { version: VERSION, source, files: Object.create(null), segments: Object.create(null) };
}

/**
 * A checkpoint file's JSON, unchecked; undefined when there is no such file (a first run). Text
 * that is not JSON is an InvalidCheckpointError. The caller checks the shape before it delivers.
 */
export async function readCheckpointJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidCheckpointError(file, 'not JSON');
  }
}

/**
 * The checkpoint a run continues from: the file's, when there is one for this source; a fresh one
 * otherwise. Its maps have no prototype (their names come from a file and a manifest).
 */
export async function openCheckpoint(file: string | undefined, source: string): Promise<BackfillCheckpoint> {
  const value = file === undefined ? undefined : await readCheckpointJson(file);
  if (file === undefined || value === undefined) return fresh(source);
  const checkpoint = checkedCheckpoint(value, file);
  if (checkpoint.source !== source)
    throw new CheckpointMismatchError(file, `it is the checkpoint of ${checkpoint.source}, not of ${source}`);
  return checkpoint;
}

/** An export's checkpoint names only the manifest's data files, and no Scan segment. */
export function checkExportCheckpoint(
  file: string | undefined,
  checkpoint: BackfillCheckpoint,
  files: readonly { readonly dataFileS3Key: string }[],
): void {
  const listed = new Set(files.map((f) => f.dataFileS3Key));
  const stray = Object.keys(checkpoint.files).find((key) => !listed.has(key));
  if (stray !== undefined)
    throw new InvalidCheckpointError(
      file ?? 'checkpoint',
      `names ${quoted(stray)}, a file the export's manifest does not list`,
    );
  if (Object.keys(checkpoint.segments).length !== 0)
    throw new InvalidCheckpointError(file ?? 'checkpoint', "an export's checkpoint has Scan segments");
}

/** A Scan's checkpoint names only its segments, and no data file. */
export function checkScanCheckpoint(
  file: string | undefined,
  checkpoint: BackfillCheckpoint,
  segments: number,
): void {
  const stray = Object.keys(checkpoint.segments).find((name) => Number(name) >= segments);
  if (stray !== undefined)
    throw new InvalidCheckpointError(
      file ?? 'checkpoint',
      `names segment ${quoted(stray)}, but the Scan has ${segments}`,
    );
  if (Object.keys(checkpoint.files).length !== 0)
    throw new InvalidCheckpointError(file ?? 'checkpoint', "a Scan's checkpoint has data files");
}

/**
 * Writes a run's checkpoint (a backfill's, a replay's) after each batch, whole or not at all (temp
 * file, rename) and readable by its owner only (it names the table's keys). Writes are chained: the last one wins, never an
 * older one finishing late.
 */
export function checkpointWriter(
  file: string | undefined,
  checkpoint: object,
): {
  save(): Promise<void>;
} {
  let chain: Promise<void> = Promise.resolve();
  return {
    save() {
      if (file === undefined) return Promise.resolve();
      const text = `${JSON.stringify(checkpoint, null, 1)}\n`;
      chain = chain.then(() => writeFileAtomic(file, text, { mode: 0o600 }));
      return chain;
    },
  };
}
