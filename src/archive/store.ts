import {
  DeleteObjectCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  ListObjectVersionsCommand,
  PutObjectCommand,
  type PutObjectCommandInput,
  RestoreObjectCommand,
  S3Client,
  type StorageClass,
  type Tier,
} from '@aws-sdk/client-s3';
import { sha256Base64 } from '../core/digest.js';
import type { InvalidOptionsError } from '../core/errors.js';
import { keyPrefix, PREFIX_OPTION } from './bucket-options.js';
import {
  ArchiveBucketNotFoundError,
  ArchiveFormatError,
  ArchiveRestoreRequiredError,
  isNoSuchBucket,
  isS3Answer,
} from './errors.js';
import {
  ARCHIVE_FORMAT,
  type ArchiveKeyParts,
  type ArchiveObjectFormat,
  type ArchiveRow,
  objectFormat,
  parquetRoot,
  parseArchiveKey,
  partitionPrefix,
  partitionTime,
  safeSegment,
} from './format.js';
import { decodeArchiveObjectOf } from './object-decoder.js';
import { PARQUET_ARCHIVE_FORMAT, type ParquetSettings } from './parquet-columns.js';

// The archive's S3 requests, read and write halves of one layout: listing hour partitions and
// fetching an object's rows (readArchive, compaction and erase all go through these, so they
// agree on what an object is), and the writes maintenance makes.

/** What readArchive, compactArchive and eraseTenant are told: where an archive is, which hours of it. */
export interface ArchiveRangeOptions {
  bucket: string;
  /** The table whose archive it is (as written in `table=<name>`). */
  table: string;
  /** Inclusive start of the record-time range. Date, epoch milliseconds or an ISO-8601 string. */
  from: Date | number | string;
  /** Exclusive end of the range. */
  to: Date | number | string;
  /** Default `new S3Client({})`. */
  client?: S3Client;
  /** The key prefix the archive sink was given. */
  prefix?: string;
  signal?: AbortSignal;
}

/** Epoch milliseconds of a Date, epoch milliseconds or ISO-8601 text; NaN for anything else. */
export function toMillis(value: unknown): number {
  return value instanceof Date
    ? value.getTime()
    : typeof value === 'number'
      ? value
      : typeof value === 'string'
        ? Date.parse(value)
        : Number.NaN;
}

const TIME_OPTION = {
  kind: 'custom',
  expected: 'a Date, epoch milliseconds or an ISO-8601 string',
  check: (v: unknown) => Number.isFinite(toMillis(v)),
  required: true,
} as const;

/** The option rules of ArchiveRangeOptions, for each operation's own reader. */
export const RANGE_OPTIONS = {
  bucket: { kind: 'nonEmptyString', required: true },
  table: { kind: 'nonEmptyString', required: true },
  from: TIME_OPTION,
  to: TIME_OPTION,
  client: { kind: 'client' },
  prefix: PREFIX_OPTION,
  signal: { kind: 'object', expected: 'an AbortSignal', methods: ['throwIfAborted'] },
} as const;

/** Where an archive is and which hours of it: what readArchive, compaction and erase list. */
export interface ArchiveRange {
  client: S3Client;
  bucket: string;
  /** Without leading or trailing slashes; '' for none. */
  prefix: string;
  /** The table's key segment (`safeSegment` of its name). */
  table: string;
  /** Inclusive start, epoch milliseconds: the hour holding it is the first listed. */
  fromMs: number;
  /** Exclusive end, epoch milliseconds. */
  toMs: number;
  signal?: AbortSignal | undefined;
}

/**
 * The range of options RANGE_OPTIONS checked: an empty or reversed [from, to) fails through the
 * operation's own reader (`fail`), so the message names the operation.
 */
export function resolveRange(
  o: ArchiveRangeOptions,
  reader: { fail(detail: string, option?: string): InvalidOptionsError },
): ArchiveRange {
  const fromMs = toMillis(o.from);
  const toMs = toMillis(o.to);
  if (!(fromMs < toMs)) throw reader.fail("'from' must be before 'to'", 'from');
  return {
    client: o.client ?? new S3Client({}),
    bucket: o.bucket,
    prefix: keyPrefix(o.prefix),
    table: safeSegment(o.table),
    fromMs,
    toMs,
    signal: o.signal,
  };
}

/** One archive object as a listing shows it. */
export interface ListedArchiveObject extends ArchiveKeyParts {
  firstSequence: bigint;
  lastSequence: bigint;
  etag: string | undefined;
  size: number;
  /** S3 lists STANDARD objects without a class on some servers: those count as STANDARD. */
  storageClass: string;
}

/** True for the storage classes S3 serves only after a restore (RestoreObject). */
export function needsRestore(storageClass: string): boolean {
  return storageClass === 'GLACIER' || storageClass === 'DEEP_ARCHIVE';
}

/** The objects of one hour partition, every tenant's and shard's, both formats', in key order. */
export interface ListedHour {
  /** `<prefix>/table=<t>/dt=<d>/hour=<h>/`: the hour, whichever root its objects are under. */
  hourPrefix: string;
  dt: string;
  hour: string;
  /** Epoch milliseconds of the hour's start. */
  startMs: number;
  objects: ListedArchiveObject[];
}

export const HOUR_MS = 3_600_000;

/** Epoch milliseconds of an hour partition's start. */
export function hourStartMs(dt: string, hour: string): number {
  return Date.parse(`${dt}T${hour}:00:00Z`);
}

/**
 * The archive objects of the hours overlapping [fromMs, toMs), one hour partition at a time in
 * time order: each hour's NDJSON objects (`<prefix>/table=<t>/…`) and Parquet objects (under the
 * Parquet root, `<prefix>/parquet/table=<t>/…`) together, as one hour. Each root is one listing in
 * key order, merged hour by hour, so memory holds an hour at a time whatever the range. Keys
 * tidewater did not write are skipped. A missing bucket is an ArchiveBucketNotFoundError.
 */
export async function* listArchiveHours(range: ArchiveRange): AsyncGenerator<ListedHour> {
  const ndjson = listRootHours(range, range.prefix);
  const parquet = listRootHours(range, parquetRoot(range.prefix));
  try {
    let [a, b] = await Promise.all([ndjson.next(), parquet.next()]);
    while (!a.done || !b.done) {
      if (b.done || (!a.done && a.value.startMs < b.value.startMs)) {
        yield a.value as ListedHour;
        a = await ndjson.next();
      } else if (a.done || b.value.startMs < a.value.startMs) {
        yield b.value;
        b = await parquet.next();
      } else {
        // Both roots hold the hour. `<prefix>/parquet/` sorts before `<prefix>/table=`: the
        // Parquet objects first keeps the hour's objects in key order.
        yield { ...a.value, objects: [...b.value.objects, ...a.value.objects] };
        [a, b] = await Promise.all([ndjson.next(), parquet.next()]);
      }
    }
  } finally {
    // A reader that stops early (an error, a break) ends both listings.
    await Promise.all([ndjson.return(undefined), parquet.return(undefined)]);
  }
}

/**
 * The hours of one root (`root` is the archive's prefix for its NDJSON objects, its Parquet root
 * for its Parquet objects). Keys sort by dt then hour, so one listing from StartAfter (just before
 * the first hour in range) to the first key past the range touches only the partitions in range —
 * a page per 1,000 objects, no per-hour probing, and hours without objects cost nothing. Only the
 * archive's own objects of its root count: a key must name an hour of `range.prefix` (so a Parquet
 * root never yields the NDJSON objects of an archive whose prefix is `<prefix>/parquet`, nor the
 * NDJSON root a Parquet object).
 */
async function* listRootHours(range: ArchiveRange, root: string): AsyncGenerator<ListedHour> {
  const tablePrefix = `${root === '' ? '' : `${root}/`}table=${range.table}/`;
  const first = partitionTime(range.fromMs / 1000);
  // Without the trailing '/', StartAfter sorts just before every key of the first hour.
  const startAfter = partitionPrefix(root, { table: range.table, ...first }).slice(0, -1);
  let token: string | undefined;
  let current: ListedHour | undefined;
  let pastRange = false;
  do {
    let page: ListObjectsV2CommandOutput;
    try {
      page = await range.client.send(
        new ListObjectsV2Command({
          Bucket: range.bucket,
          Prefix: tablePrefix,
          StartAfter: startAfter,
          ContinuationToken: token,
        }),
        { abortSignal: range.signal },
      );
    } catch (error) {
      if (isNoSuchBucket(error)) throw new ArchiveBucketNotFoundError(range.bucket, { cause: error });
      throw error;
    }
    for (const item of page.Contents ?? []) {
      const parsed = item.Key === undefined ? undefined : parseArchiveKey(item.Key);
      if (parsed === undefined) continue;
      const startMs = hourStartMs(parsed.dt, parsed.hour);
      if (startMs >= range.toMs) {
        pastRange = true;
        break;
      }
      if (startMs + HOUR_MS <= range.fromMs) continue;
      if (parsed.hourPrefix !== partitionPrefix(range.prefix, { ...parsed, table: range.table })) continue;
      if (current === undefined || current.hourPrefix !== parsed.hourPrefix) {
        if (current !== undefined) yield current;
        current = { hourPrefix: parsed.hourPrefix, dt: parsed.dt, hour: parsed.hour, startMs, objects: [] };
      }
      current.objects.push({
        ...parsed,
        firstSequence: BigInt(parsed.first),
        lastSequence: BigInt(parsed.last),
        etag: item.ETag,
        size: item.Size ?? 0,
        storageClass: item.StorageClass ?? 'STANDARD',
      });
    }
    token = page.IsTruncated && !pastRange ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  if (current !== undefined) yield current;
}

/**
 * The archive objects of one hour in both roots, with their ETags, in key order: what compaction
 * lists again before it deletes. Only keys of this archive's hour count (see listRootHours).
 */
export async function listHourKeys(
  store: Store,
  prefix: string,
  hour: { table: string; dt: string; hour: string },
): Promise<{ key: string; etag: string | undefined }[]> {
  const hourPrefix = partitionPrefix(prefix, hour);
  const [parquet, ndjson] = await Promise.all([
    listKeys(store, partitionPrefix(parquetRoot(prefix), hour)),
    listKeys(store, hourPrefix),
  ]);
  return [...parquet, ...ndjson].filter((x) => parseArchiveKey(x.key)?.hourPrefix === hourPrefix);
}

/** One archive object read: its rows, and which version of it was read. */
export interface FetchedArchiveObject {
  rows: ArchiveRow[];
  etag: string | undefined;
  /** Set by versioned buckets: deleting exactly this version never removes a newer write. */
  versionId: string | undefined;
  bytes: number;
  format: ArchiveObjectFormat;
  /** A Parquet object's settings (key attributes, typed columns): a rewrite keeps them. */
  parquet?: ParquetSettings;
}

/**
 * Gets and decodes one archive object, comparing its body to the SHA-256 in its metadata when
 * `verify` (ArchiveFormatError on a mismatch, bad gzip or a line that is no row). An archived
 * object S3 will not serve yet (InvalidObjectState) is an ArchiveRestoreRequiredError naming it.
 */
export async function fetchArchiveObject(
  client: S3Client,
  bucket: string,
  key: string,
  options: { verify: boolean; signal?: AbortSignal | undefined },
): Promise<FetchedArchiveObject> {
  let response: GetObjectCommandOutput;
  try {
    response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), {
      abortSignal: options.signal,
    });
  } catch (error) {
    // GLACIER / DEEP_ARCHIVE without a restored copy (or one expired since it was checked).
    // By its code alone: a 403 is also AccessDenied.
    if ((error as { name?: string } | undefined)?.name === 'InvalidObjectState')
      throw new ArchiveRestoreRequiredError([key], { cause: error });
    throw error;
  }
  if (response.Body === undefined) throw new ArchiveFormatError(key, 'empty response body');
  const body = await response.Body.transformToByteArray();
  const expected = response.Metadata?.sha256;
  if (options.verify && expected !== undefined && sha256Base64(body) !== expected) {
    throw new ArchiveFormatError(key, 'SHA-256 of the body does not match the object metadata');
  }
  const decoded = await decodeArchiveObjectOf(body, key);
  const fetched: FetchedArchiveObject = {
    rows: decoded.rows,
    etag: response.ETag,
    versionId: response.VersionId,
    bytes: body.length,
    format: objectFormat(key),
  };
  if (decoded.parquet !== undefined) fetched.parquet = decoded.parquet;
  return fetched;
}

// Maintenance beyond reading: writing replacement objects, deleting exactly what was read, and
// every version of what is erased.

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
  const parquet = objectFormat(object.key) === 'parquet';
  const put = new PutObjectCommand({
    Bucket: store.bucket,
    Key: object.key,
    Body: object.body,
    ...(parquet
      ? { ContentType: 'application/vnd.apache.parquet' }
      : { ContentType: 'application/x-ndjson', ContentEncoding: 'gzip' }),
    // S3 verifies the body against it: a rewritten object is never stored corrupt.
    ChecksumSHA256: object.sha256,
    StorageClass: settings.storageClass as StorageClass,
    Metadata: {
      format: parquet ? PARQUET_ARCHIVE_FORMAT : ARCHIVE_FORMAT,
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

/** HeadObject of one key (works in every class); undefined when the key does not exist. */
export async function headObject(store: Store, key: string): Promise<HeadObjectCommandOutput | undefined> {
  const head = new HeadObjectCommand({ Bucket: store.bucket, Key: key });
  try {
    return await guard(store, (o) => store.client.send(head, o));
  } catch (error) {
    if (isS3Answer(error, 'NotFound', 404) || isS3Answer(error, 'NoSuchKey', 404)) return undefined;
    throw error;
  }
}

/**
 * RestoreObject of one archived key: a readable copy for `days` days, retrieved at `tier`. Returns
 * S3's status: 202 a restore started, 200 the object was restored already (its copy now lasts
 * `days` from now). S3's refusals (409 RestoreAlreadyInProgress, 403 InvalidObjectState, 404) are
 * thrown as the SDK's errors, for the caller to read.
 */
export async function restoreObject(
  store: Store,
  key: string,
  request: { tier: Tier; days: number },
): Promise<number | undefined> {
  const restore = new RestoreObjectCommand({
    Bucket: store.bucket,
    Key: key,
    RestoreRequest: { Days: request.days, GlacierJobParameters: { Tier: request.tier } },
  });
  const answer = await guard(store, (o) => store.client.send(restore, o));
  return answer.$metadata.httpStatusCode;
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
    if (isS3Answer(error, 'NotImplemented', 501)) return false;
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
