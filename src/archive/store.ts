import {
  DeleteObjectCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutObjectCommand,
  type PutObjectCommandInput,
  type S3Client,
  type StorageClass,
} from '@aws-sdk/client-s3';
import { ARCHIVE_FORMAT } from './format.js';
import { ArchiveBucketNotFoundError, isNoSuchBucket } from './layout-errors.js';

// The S3 requests archive maintenance makes beyond reading (read-store.ts): writing
// replacement objects, deleting exactly what was read, and every version of what is erased.

/** The bucket and client one maintenance run works with. */
export interface Store {
  client: S3Client;
  bucket: string;
  signal?: AbortSignal | undefined;
}

/** Write settings for the objects maintenance puts (compacted and rewritten archive objects). */
export interface WriteSettings {
  storageClass: string;
  /** PutObject encryption parameters (see sseParams). */
  sse: Partial<PutObjectCommandInput>;
}

/** A request's answer; a missing bucket as ArchiveBucketNotFoundError. */
async function guard<T>(
  store: Store,
  call: (options: { abortSignal?: AbortSignal }) => Promise<T>,
): Promise<T> {
  try {
    return await call(store.signal === undefined ? {} : { abortSignal: store.signal });
  } catch (error) {
    if (isNoSuchBucket(error)) throw new ArchiveBucketNotFoundError(store.bucket, { cause: error });
    throw error;
  }
}

/** An archive object, with the metadata the sinks write, so readers cannot tell who wrote it. */
export async function putArchiveObject(
  store: Store,
  settings: WriteSettings,
  object: { key: string; body: Buffer; sha256: string; first: string; last: string; rows: number },
  extraMetadata: Record<string, string> = {},
): Promise<void> {
  const put = new PutObjectCommand({
    Bucket: store.bucket,
    Key: object.key,
    Body: object.body,
    ContentType: 'application/x-ndjson',
    ContentEncoding: 'gzip',
    // S3 verifies the body against it: a rewritten object is never stored corrupt.
    ChecksumSHA256: object.sha256,
    StorageClass: settings.storageClass as StorageClass,
    Metadata: {
      format: ARCHIVE_FORMAT,
      'record-count': String(object.rows),
      'first-sequence-number': object.first,
      'last-sequence-number': object.last,
      sha256: object.sha256,
      ...extraMetadata,
    },
    ...settings.sse,
  });
  await guard(store, (o) => store.client.send(put, o));
}

/** A small JSON document (a manifest). */
export async function putJson(
  store: Store,
  settings: WriteSettings,
  key: string,
  value: unknown,
): Promise<void> {
  const put = new PutObjectCommand({
    Bucket: store.bucket,
    Key: key,
    Body: `${JSON.stringify(value, null, 1)}\n`,
    ContentType: 'application/json',
    ...settings.sse,
  });
  await guard(store, (o) => store.client.send(put, o));
}

export async function getText(store: Store, key: string): Promise<string> {
  const get = new GetObjectCommand({ Bucket: store.bucket, Key: key });
  const response = await guard(store, (o) => store.client.send(get, o));
  return (await response.Body?.transformToString()) ?? '';
}

/** The archive rows an object holds, from its `record-count` metadata (a HEAD: works in every class). */
export async function recordCount(store: Store, key: string): Promise<number | undefined> {
  const head = new HeadObjectCommand({ Bucket: store.bucket, Key: key });
  const answer = await guard(store, (o) => store.client.send(head, o));
  const count = Number(answer.Metadata?.['record-count']);
  return Number.isInteger(count) ? count : undefined;
}

/** Every key under a prefix, with its ETag, in key order. */
export async function listKeys(
  store: Store,
  prefix: string,
): Promise<{ key: string; etag: string | undefined }[]> {
  const out: { key: string; etag: string | undefined }[] = [];
  let token: string | undefined;
  do {
    const list = new ListObjectsV2Command({ Bucket: store.bucket, Prefix: prefix, ContinuationToken: token });
    const page = await guard(store, (o) => store.client.send(list, o));
    for (const item of page.Contents ?? [])
      if (item.Key !== undefined) out.push({ key: item.Key, etag: item.ETag });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return out;
}

/**
 * Deletes one object: the version read when one is known (on a versioned bucket that removes
 * exactly what was read; a newer write of the key survives), else the current object.
 */
export async function deleteObject(store: Store, key: string, versionId?: string): Promise<void> {
  const del = new DeleteObjectCommand({
    Bucket: store.bucket,
    Key: key,
    ...(versionId === undefined ? {} : { VersionId: versionId }),
  });
  await guard(store, (o) => store.client.send(del, o));
}

/**
 * Whether the bucket keeps object versions (versioning Enabled, or Suspended with versions from
 * before). A server that does not implement versioning (NotImplemented) keeps none.
 */
export async function keepsVersions(store: Store): Promise<boolean> {
  const get = new GetBucketVersioningCommand({ Bucket: store.bucket });
  try {
    const answer = await guard(store, (o) => store.client.send(get, o));
    return answer.Status === 'Enabled' || answer.Status === 'Suspended';
  } catch (error) {
    const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e?.name === 'NotImplemented' || e?.$metadata?.httpStatusCode === 501) return false;
    throw error;
  }
}

/**
 * Deletes a key for good: on a bucket that keeps versions, every version and delete marker of
 * exactly that key (a plain delete would only hide the data behind a delete marker); otherwise
 * the object. Returns how many versions (or objects) were deleted.
 */
export async function deleteEveryVersion(store: Store, key: string, versioned: boolean): Promise<number> {
  if (!versioned) {
    await deleteObject(store, key);
    return 1;
  }
  const versions: (string | undefined)[] = [];
  let keyMarker: string | undefined;
  let versionMarker: string | undefined;
  do {
    const list = new ListObjectVersionsCommand({
      Bucket: store.bucket,
      Prefix: key,
      KeyMarker: keyMarker,
      VersionIdMarker: versionMarker,
    });
    const page = await guard(store, (o) => store.client.send(list, o));
    for (const v of [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])]) {
      if (v.Key === key) versions.push(v.VersionId);
    }
    keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
    versionMarker = page.IsTruncated ? page.NextVersionIdMarker : undefined;
  } while (keyMarker !== undefined);
  for (const versionId of versions) await deleteObject(store, key, versionId);
  return versions.length;
}
