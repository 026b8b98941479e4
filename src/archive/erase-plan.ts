import type { ArchiveRow } from './format.js';
import { HOUR_MS } from './store.js';

/**
 * What erasing one tenant does with one archive object, before reading it:
 * - `delete`: the tenant's own object, in an hour wholly inside the range — deleted unread;
 * - `read`: it may hold some of the tenant's rows (an unpartitioned object, or the tenant's own in
 *   an hour the range cuts) — read, then deleted, rewritten without them, or left;
 * - `keep`: another tenant's object — never read, never written;
 * - `unpartitioned`: rows of every tenant, and no partitioner to tell them apart.
 */
export type EraseAction = 'delete' | 'read' | 'keep' | 'unpartitioned';

export function eraseAction(
  object: { tenant?: string | undefined },
  hourStartMs: number,
  target: { segment: string; fromMs: number; toMs: number; canPartition: boolean },
): EraseAction {
  if (object.tenant !== undefined) {
    if (object.tenant !== target.segment) return 'keep';
    const whole = hourStartMs >= target.fromMs && hourStartMs + HOUR_MS <= target.toMs;
    return whole ? 'delete' : 'read';
  }
  return target.canPartition ? 'read' : 'unpartitioned';
}

export interface RowSplit {
  erased: ArchiveRow[];
  /** The other rows, in their order in the object. */
  kept: ArchiveRow[];
  /** Rows kept because their tenant could not be told (the partitioner threw). */
  unattributed: number;
}

/**
 * Splits an object's rows into the tenant's rows inside [fromMs, toMs) and the rest. `isTenant`
 * answers undefined for a row it cannot place: such a row is kept, and counted.
 */
export function splitRows(
  rows: readonly ArchiveRow[],
  isTenant: (row: ArchiveRow) => boolean | undefined,
  fromMs: number,
  toMs: number,
): RowSplit {
  const split: RowSplit = { erased: [], kept: [], unattributed: 0 };
  for (const row of rows) {
    const ms = row.approximateCreationDateTime * 1000;
    if (ms < fromMs || ms >= toMs) {
      split.kept.push(row);
      continue;
    }
    const mine = isTenant(row);
    if (mine === undefined) split.unattributed++;
    (mine === true ? split.erased : split.kept).push(row);
  }
  return split;
}
