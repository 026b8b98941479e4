import {
  GetObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  S3Client,
} from '@aws-sdk/client-s3';
import type { InvalidOptionsError } from '../core/errors.js';
import { sha256Base64 } from '../sinks/digest.js';
import { ArchiveFormatError } from '../sinks/errors.js';
import { keyPrefix, PREFIX_OPTION } from '../sinks/options.js';
import {
  type ArchiveKeyParts,
  type ArchiveRow,
  decodeObject,
  parseArchiveKey,
  partitionPrefix,
  partitionTime,
  safeSegment,
} from './format.js';
import { ArchiveBucketNotFoundError, isNoSuchBucket } from './layout-errors.js';

// Reading a stored archive from S3: listing its hour partitions and fetching an object's rows.
// readArchive, compaction and erase all go through these, so they agree on what an object is.

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

/** The objects of one hour partition, every tenant's and shard's, in key order. */
export interface ListedHour {
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
 * time order. Keys sort by dt then hour, so one listing from StartAfter (just before the first
 * hour in range) to the first key past the range touches only the partitions in range — a page
 * per 1,000 objects, no per-hour probing, and hours without objects cost nothing. Keys tidewater
 * did not write are skipped. A missing bucket is an ArchiveBucketNotFoundError.
 */
export async function* listArchiveHours(range: ArchiveRange): AsyncGenerator<ListedHour> {
  const tablePrefix = `${range.prefix === '' ? '' : `${range.prefix}/`}table=${range.table}/`;
  const first = partitionTime(range.fromMs / 1000);
  // Without the trailing '/', StartAfter sorts just before every key of the first hour.
  const startAfter = partitionPrefix(range.prefix, { table: range.table, ...first }).slice(0, -1);
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
      if (parsed === undefined || parsed.table !== range.table) continue;
      const startMs = hourStartMs(parsed.dt, parsed.hour);
      if (startMs >= range.toMs) {
        pastRange = true;
        break;
      }
      if (startMs + HOUR_MS <= range.fromMs) continue;
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

/** One archive object read: its rows, and which version of it was read. */
export interface FetchedArchiveObject {
  rows: ArchiveRow[];
  etag: string | undefined;
  /** Set by versioned buckets: deleting exactly this version never removes a newer write. */
  versionId: string | undefined;
  bytes: number;
}

/**
 * Gets and decodes one archive object, comparing its body to the SHA-256 in its metadata when
 * `verify` (ArchiveFormatError on a mismatch, bad gzip or a line that is no row).
 */
export async function fetchArchiveObject(
  client: S3Client,
  bucket: string,
  key: string,
  options: { verify: boolean; signal?: AbortSignal | undefined },
): Promise<FetchedArchiveObject> {
  const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), {
    abortSignal: options.signal,
  });
  if (response.Body === undefined) throw new ArchiveFormatError(key, 'empty response body');
  const body = await response.Body.transformToByteArray();
  const expected = response.Metadata?.sha256;
  if (options.verify && expected !== undefined && sha256Base64(body) !== expected) {
    throw new ArchiveFormatError(key, 'SHA-256 of the body does not match the object metadata');
  }
  return {
    rows: decodeObject(body, key),
    etag: response.ETag,
    versionId: response.VersionId,
    bytes: body.length,
  };
}
