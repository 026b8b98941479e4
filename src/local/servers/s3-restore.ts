// Archived objects as S3 serves them: a GLACIER or DEEP_ARCHIVE object refuses GetObject (and
// being a copy source) with 403 InvalidObjectState until RestoreObject made a temporary copy
// readable; HeadObject reports the restore in `x-amz-restore`. The restore is a record in the
// object's metadata (s3-metadata.ts): when it was asked for, when it is ready, when it expires.
// Its state is read against the server's clock at each request, so nothing runs in between (no
// timer to outlive the server) and a test moves a restore on by moving the clock.

import { RestoreRequestError } from './errors.js';
import { readBoundedBody } from './s3-body.js';
import { answerError, type S3rverContext, type S3rverStore } from './s3-context.js';
import type { KeyedQueue } from './s3-keyed-queue.js';
import { classOf, RESTORE_FIELD, storedMetadata, updateMetadata } from './s3-metadata.js';
import { MAX_RESTORE_BODY_BYTES, parseRestoreRequest, type RestoreRequest } from './s3-restore-request.js';

/** How restores run on the local server (startS3Server's restore options). */
export interface RestoreSettings {
  /** From the request to the readable copy. */
  delayMs: number;
  /** The length of one of the request's Days (expiry is counted in these). */
  dayMs: number;
  /** The server's clock, epoch milliseconds. */
  now: () => number;
}

/** One restore of one object, in epoch milliseconds. */
interface RestoreRecord {
  readyAt: number;
  expiresAt: number;
  tier: string;
}

type RestoreState = 'none' | 'ongoing' | 'restored';

/** The classes S3 serves only after a restore. */
export function isArchivedClass(storageClass: string): boolean {
  return storageClass === 'GLACIER' || storageClass === 'DEEP_ARCHIVE';
}

function recordOf(metadata: Record<string, unknown> | undefined): RestoreRecord | undefined {
  const value = metadata?.[RESTORE_FIELD] as Partial<RestoreRecord> | undefined;
  return typeof value?.readyAt === 'number' && typeof value.expiresAt === 'number'
    ? (value as RestoreRecord)
    : undefined;
}

function stateOf(record: RestoreRecord | undefined, now: number): RestoreState {
  if (record === undefined || now >= record.expiresAt) return 'none';
  return now < record.readyAt ? 'ongoing' : 'restored';
}

/**
 * S3's expiry: the restore's completion plus Days, rounded up to the next day boundary (midnight
 * UTC with real days); kept inside the range of a Date.
 */
function expiryOf(fromMs: number, days: number, dayMs: number): number {
  return Math.min(Math.ceil((fromMs + days * dayMs) / dayMs) * dayMs, 8.64e15);
}

/** `x-amz-restore` for an archived object's metadata; undefined when no restore is under way or done. */
export function restoreHeader(
  metadata: Record<string, unknown> | undefined,
  now: number,
): string | undefined {
  const record = recordOf(metadata);
  const state = stateOf(record, now);
  if (record === undefined || state === 'none') return undefined;
  if (state === 'ongoing') return 'ongoing-request="true"';
  return `ongoing-request="false", expiry-date="${new Date(record.expiresAt).toUTCString()}"`;
}

/** True when the object is archived and no restored copy is readable: GetObject and copies are refused. */
export function isUnreadable(metadata: Record<string, unknown> | undefined, now: number): boolean {
  return (
    metadata !== undefined &&
    isArchivedClass(classOf(metadata)) &&
    stateOf(recordOf(metadata), now) !== 'restored'
  );
}

/** S3's answer to a read of an archived object not restored. */
export function invalidObjectState(ctx: S3rverContext, storageClass: string): void {
  answerError(ctx, 403, 'InvalidObjectState', "The operation is not valid for the object's storage class", {
    StorageClass: storageClass,
  });
}

/**
 * RestoreObject: 202 when a restore starts, 200 when the object is restored already (its expiry
 * moved to Days from now, as S3 does), 409 RestoreAlreadyInProgress while one runs. The body is
 * read bounded and parsed strictly before anything is looked up.
 */
export async function restoreObject(
  ctx: S3rverContext,
  store: S3rverStore,
  writes: KeyedQueue,
  target: { bucket: string; key: string },
  settings: RestoreSettings,
): Promise<void> {
  const text = await readBoundedBody(ctx, MAX_RESTORE_BODY_BYTES);
  if (text === undefined) return;
  let request: RestoreRequest;
  try {
    request = parseRestoreRequest(text);
  } catch (error) {
    if (!(error instanceof RestoreRequestError)) throw error;
    return error.code === 'NotImplemented'
      ? answerError(ctx, 501, 'NotImplemented', 'S3 Select restores are not served by the local S3 server')
      : answerError(
          ctx,
          400,
          'MalformedXML',
          'The XML you provided was not well-formed or did not validate against our published schema.',
        );
  }
  const { bucket, key } = target;
  if (!(await store.getBucket(bucket)))
    return answerError(ctx, 404, 'NoSuchBucket', 'The specified bucket does not exist', {
      BucketName: bucket,
    });
  await writes.run(`${bucket}/${key}`, async () => {
    const metadata = await storedMetadata(store, bucket, key);
    if (metadata === undefined)
      return answerError(ctx, 404, 'NoSuchKey', 'The specified key does not exist.', { Key: key });
    if (!isArchivedClass(classOf(metadata)))
      return answerError(
        ctx,
        403,
        'InvalidObjectState',
        "Restore is not allowed for the object's current storage class",
      );
    const now = settings.now();
    const record = recordOf(metadata);
    const state = stateOf(record, now);
    if (state === 'ongoing')
      return answerError(ctx, 409, 'RestoreAlreadyInProgress', 'Object restore is already in progress');
    const readyAt = state === 'restored' && record !== undefined ? record.readyAt : now + settings.delayMs;
    const next: RestoreRecord = {
      readyAt,
      expiresAt: expiryOf(state === 'restored' ? now : readyAt, request.days, settings.dayMs),
      tier: state === 'restored' && record !== undefined ? record.tier : request.tier,
    };
    await updateMetadata(store, bucket, key, (m) => {
      m[RESTORE_FIELD] = next;
    });
    ctx.status = state === 'restored' ? 200 : 202;
    ctx.body = '';
  });
}
