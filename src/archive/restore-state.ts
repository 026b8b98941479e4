import pLimit, { type LimitFunction } from 'p-limit';
import { ArchiveRestoreRequiredError } from './errors.js';
import { headObject, needsRestore, type Store } from './store.js';

// Whether an archived object can be read, as HeadObject tells it: the one place readArchive,
// compaction, erase, restoreArchive (and replay) learn it, so they agree. Only objects listed in
// GLACIER or DEEP_ARCHIVE are asked about: an archive in other classes costs no request here.

/** Where one archive object stands for a reader. */
export type ObjectRestoreState =
  /** GLACIER / DEEP_ARCHIVE with no restored copy: GetObject is refused. */
  | { state: 'needs-restore' }
  /** A restore was asked for and is still running. */
  | { state: 'restore-in-progress' }
  /** A restored copy is readable until `until` (S3's expiry date; undefined if it sent none). */
  | { state: 'restored'; until: Date | undefined }
  /** Its class no longer needs a restore (copied to another class since it was listed). */
  | { state: 'not-archived' };

/** The state HeadObject's `x-amz-restore` (the SDK's `Restore`) tells of an archived object. */
export function restoreStateOf(header: string | undefined): ObjectRestoreState {
  if (header === undefined) return { state: 'needs-restore' };
  if (/ongoing-request\s*=\s*"true"/.test(header)) return { state: 'restore-in-progress' };
  if (!/ongoing-request\s*=\s*"false"/.test(header)) return { state: 'needs-restore' };
  const expiry = Date.parse(/expiry-date\s*=\s*"([^"]*)"/.exec(header)?.[1] ?? '');
  return { state: 'restored', until: Number.isFinite(expiry) ? new Date(expiry) : undefined };
}

/** One object's state from a HeadObject; undefined when the key no longer exists. */
export async function objectRestoreState(store: Store, key: string): Promise<ObjectRestoreState | undefined> {
  const head = await headObject(store, key);
  if (head === undefined) return undefined;
  if (!needsRestore(head.StorageClass ?? 'STANDARD')) return { state: 'not-archived' };
  return restoreStateOf(head.Restore);
}

/**
 * The states of the objects listed in GLACIER / DEEP_ARCHIVE among `objects` (one HeadObject
 * each, `limit` at a time), by key. Other objects, and keys gone since listed, are not in it.
 */
export async function restoreStates(
  store: Store,
  objects: readonly { key: string; storageClass: string }[],
  limit: LimitFunction = pLimit(8),
): Promise<Map<string, ObjectRestoreState>> {
  const archived = objects.filter((object) => needsRestore(object.storageClass));
  const states = await Promise.all(archived.map((o) => limit(() => objectRestoreState(store, o.key))));
  const out = new Map<string, ObjectRestoreState>();
  archived.forEach((object, i) => {
    const state = states[i];
    if (state !== undefined) out.set(object.key, state);
  });
  return out;
}

/**
 * Throws ArchiveRestoreRequiredError, naming every one, when objects among `objects` are in
 * GLACIER / DEEP_ARCHIVE without a readable restored copy; resolves when all can be read.
 */
export async function requireRestored(
  store: Store,
  objects: readonly { key: string; storageClass: string }[],
  limit?: LimitFunction,
): Promise<void> {
  const keys: string[] = [];
  const inProgress: string[] = [];
  for (const [key, { state }] of await restoreStates(store, objects, limit)) {
    if (state === 'needs-restore' || state === 'restore-in-progress') keys.push(key);
    if (state === 'restore-in-progress') inProgress.push(key);
  }
  if (keys.length > 0) throw new ArchiveRestoreRequiredError(keys.sort(), { inProgress: inProgress.sort() });
}
