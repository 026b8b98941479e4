import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { needsRestore } from '../archive/store.js';

/** What S3 says of a finished restore in HeadObject's `x-amz-restore` (`Restore`) header. */
const RESTORED = /ongoing-request\s*=\s*"false"/;

/**
 * The keys among `objects` that cannot be read yet: in GLACIER or DEEP_ARCHIVE (as the listing
 * shows them) and not restored, that is HeadObject's `Restore` does not say
 * `ongoing-request="false"` (no restore asked for, or one still running). A HEAD per cold object
 * only: a STANDARD one is readable as listed. Expired restores read as not restored, as S3 drops
 * the header when the copy expires.
 */
export async function keysAwaitingRestore(
  client: S3Client,
  bucket: string,
  objects: Iterable<{ readonly key: string; readonly storageClass: string }>,
  signal?: AbortSignal,
): Promise<string[]> {
  const waiting: string[] = [];
  for (const object of objects) {
    if (!needsRestore(object.storageClass)) continue;
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: object.key }), {
      abortSignal: signal,
    });
    if (head.Restore === undefined || !RESTORED.test(head.Restore)) waiting.push(object.key);
  }
  return waiting;
}
