// What the local S3 server keeps of an object beyond what s3rver does: its storage class and,
// for an archived one, its restore. Both live in s3rver's metadata.json under names that are no
// header (s3rver returns only headers from it), so they go wherever s3rver moves that file:
// deleted with the object, copied with it, kept across restarts of a persistent directory.
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import { OWNER_ONLY } from '../../core/write-file-atomic.js';
import type { S3rverStore } from './s3-context.js';

export const CLASS_FIELD = 'tidewater:storage-class';
/** The object's restore (s3-restore.ts's RestoreRecord), when one was requested. */
export const RESTORE_FIELD = 'tidewater:restore';
export const STORAGE_CLASS_HEADER = 'x-amz-storage-class';

export async function readJson(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** An object's metadata.json; undefined when the object does not exist. */
export function storedMetadata(
  store: S3rverStore,
  bucket: string,
  key: string,
): Promise<Record<string, unknown> | undefined> {
  return readJson(store.getResourcePath(bucket, key, 'metadata.json'));
}

/** The class of a stored object; one s3rver stored itself (before this server's middleware) still counts. */
export function classOf(metadata: Record<string, unknown> | undefined): string {
  const value = metadata?.[CLASS_FIELD] ?? metadata?.[STORAGE_CLASS_HEADER];
  return typeof value === 'string' ? value : 'STANDARD';
}

export async function storedClass(store: S3rverStore, bucket: string, key: string): Promise<string> {
  return classOf(await storedMetadata(store, bucket, key));
}

/**
 * Rewrites an object's metadata.json through `change`. Renamed into place, so a concurrent read
 * never parses half a file; callers hold the key's turn, so writes to one key never interleave.
 */
export async function updateMetadata(
  store: S3rverStore,
  bucket: string,
  key: string,
  change: (metadata: Record<string, unknown>) => void,
): Promise<void> {
  const file = store.getResourcePath(bucket, key, 'metadata.json');
  const metadata = (await readJson(file)) ?? {};
  change(metadata);
  await writeFile(`${file}.tidewater`, JSON.stringify(metadata, null, 2), { mode: OWNER_ONLY });
  await chmod(`${file}.tidewater`, OWNER_ONLY);
  await rename(`${file}.tidewater`, file);
}

/** The class of an object just written (put, copied or completed): a new object, never restored. */
export function recordClass(store: S3rverStore, bucket: string, key: string, storageClass: string) {
  return updateMetadata(store, bucket, key, (metadata) => {
    delete metadata[STORAGE_CLASS_HEADER];
    delete metadata[RESTORE_FIELD];
    metadata[CLASS_FIELD] = storageClass;
  });
}
