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

function isCheckpoint(value: unknown): value is BackfillCheckpoint {
  const c = value as BackfillCheckpoint | null;
  return (
    c !== null &&
    typeof c === 'object' &&
    c.version === VERSION &&
    typeof c.source === 'string' &&
    typeof c.files === 'object' &&
    c.files !== null &&
    typeof c.segments === 'object' &&
    c.segments !== null
  );
}

/** The checkpoint a run continues from: the file's, when there is one for this source; a fresh one otherwise. */
export async function openCheckpoint(file: string | undefined, source: string): Promise<BackfillCheckpoint> {
  const fresh: BackfillCheckpoint = { version: VERSION, source, files: {}, segments: {} };
  if (file === undefined) return fresh;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return fresh;
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidCheckpointError(file, 'not JSON');
  }
  if (!isCheckpoint(value))
    throw new InvalidCheckpointError(file, `not a backfill checkpoint (version ${VERSION})`);
  if (value.source !== source)
    throw new CheckpointMismatchError(file, `it is the checkpoint of ${value.source}, not of ${source}`);
  return value;
}

/**
 * Writes a run's checkpoint after each batch, whole or not at all (temp file, rename) and readable
 * by its owner only (it names the table's keys). Writes are chained: the last one wins, never an
 * older one finishing late.
 */
export function checkpointWriter(
  file: string | undefined,
  checkpoint: BackfillCheckpoint,
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
