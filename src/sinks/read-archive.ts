import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { parseStreamRecord } from '../records/index.js';
import { InvalidOptionsError } from '../records/errors.js';
import type { ClassifiedRecord } from '../records/types.js';
import {
  type ArchiveRow,
  decodeObject,
  parseObjectKey,
  partitionPrefix,
  partitionTime,
  rowToLambdaRecord,
  safeSegment,
  sha256Base64,
} from './archive-format.js';
import { ArchiveFormatError } from './errors.js';
import { assertOptions, keyPrefix, optionalClient, requiredString } from './options.js';

export interface ReadArchiveOptions {
  bucket: string;
  /** The table whose archive to read (as written in `table=<name>`). */
  table: string;
  /** Inclusive start of the deletion-time range. Date, epoch milliseconds or an ISO-8601 string. */
  from: Date | number | string;
  /** Exclusive end of the range. */
  to: Date | number | string;
  /** Default `new S3Client({})`. */
  client?: S3Client;
  prefix?: string;
  /** Compare each object's body to the SHA-256 in its metadata. Default true. */
  verifyChecksum?: boolean;
  signal?: AbortSignal;
}

const OPTIONS = ['bucket', 'table', 'from', 'to', 'client', 'prefix', 'verifyChecksum', 'signal'] as const;
const WHERE = 'readArchive';
const HOUR_MS = 3_600_000;

function toMillis(value: unknown, key: string): number {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'number'
        ? value
        : typeof value === 'string'
          ? Date.parse(value)
          : Number.NaN;
  if (!Number.isFinite(ms)) throw new InvalidOptionsError(`${WHERE}: option '${key}' must be a Date, epoch milliseconds or an ISO-8601 string`);
  return ms;
}

interface ResolvedRead {
  client: S3Client;
  bucket: string;
  prefix: string;
  table: string;
  fromMs: number;
  toMs: number;
  verify: boolean;
  signal: AbortSignal | undefined;
}

function resolve(options: ReadArchiveOptions): ResolvedRead {
  assertOptions(options, OPTIONS, WHERE);
  if (options === undefined) throw new InvalidOptionsError(`${WHERE}: options are required`);
  const fromMs = toMillis(options.from, 'from');
  const toMs = toMillis(options.to, 'to');
  if (!(fromMs < toMs)) throw new InvalidOptionsError(`${WHERE}: 'from' must be before 'to'`);
  if (options.verifyChecksum !== undefined && typeof options.verifyChecksum !== 'boolean') {
    throw new InvalidOptionsError(`${WHERE}: verifyChecksum must be a boolean`);
  }
  return {
    client: optionalClient<S3Client>(options, WHERE) ?? new S3Client({}),
    bucket: requiredString(options, 'bucket', WHERE),
    prefix: keyPrefix(options, WHERE),
    table: safeSegment(requiredString(options, 'table', WHERE)),
    fromMs,
    toMs,
    verify: options.verifyChecksum ?? true,
    signal: options.signal,
  };
}

interface ListedObject {
  key: string;
  shard: string;
  first: bigint;
  last: bigint;
}

async function listPartition(r: ResolvedRead, prefix: string): Promise<ListedObject[]> {
  const objects: ListedObject[] = [];
  let token: string | undefined;
  do {
    const page = await r.client.send(
      new ListObjectsV2Command({ Bucket: r.bucket, Prefix: prefix, ContinuationToken: token }),
      { abortSignal: r.signal },
    );
    for (const item of page.Contents ?? []) {
      const parsed = item.Key === undefined ? undefined : parseObjectKey(item.Key);
      if (parsed === undefined || item.Key === undefined) continue;
      objects.push({ key: item.Key, shard: parsed.shard, first: BigInt(parsed.first), last: BigInt(parsed.last) });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  // Listing order is lexicographic; sequence numbers compare as integers.
  objects.sort((a, b) =>
    a.shard !== b.shard ? (a.shard < b.shard ? -1 : 1) : a.first !== b.first ? (a.first < b.first ? -1 : 1) : a.last < b.last ? 1 : a.last > b.last ? -1 : 0,
  );
  return objects;
}

async function fetchRows(r: ResolvedRead, key: string): Promise<ArchiveRow[]> {
  const response = await r.client.send(new GetObjectCommand({ Bucket: r.bucket, Key: key }), { abortSignal: r.signal });
  if (response.Body === undefined) throw new ArchiveFormatError(key, 'empty response body');
  const body = await response.Body.transformToByteArray();
  const expected = response.Metadata?.sha256;
  if (r.verify && expected !== undefined && sha256Base64(body) !== expected) {
    throw new ArchiveFormatError(key, 'SHA-256 of the body does not match the object metadata');
  }
  return decodeObject(body, key);
}

/** Common prefixes (one level down, `Delimiter: '/'`) under `prefix`, from `startAfter` on. */
async function listLevel(r: ResolvedRead, prefix: string, startAfter: string): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const page = await r.client.send(
      new ListObjectsV2Command({
        Bucket: r.bucket,
        Prefix: prefix,
        Delimiter: '/',
        ContinuationToken: token,
        ...(token === undefined ? { StartAfter: startAfter } : {}),
      }),
      { abortSignal: r.signal },
    );
    for (const p of page.CommonPrefixes ?? []) if (p.Prefix !== undefined) out.push(p.Prefix);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return out;
}

/** Past this many hours, discovering the partitions that exist is cheaper than probing every hour. */
const PROBE_HOURS = 48;

/** The hour partition prefixes in range, in time order. */
async function partitionsInRange(r: ResolvedRead): Promise<string[]> {
  const firstHour = Math.floor(r.fromMs / HOUR_MS) * HOUR_MS;
  const hours: string[] = [];
  if ((r.toMs - firstHour) / HOUR_MS <= PROBE_HOURS) {
    for (let hour = firstHour; hour < r.toMs; hour += HOUR_MS) {
      const { dt, hour: hh } = partitionTime(hour / 1000);
      hours.push(partitionPrefix(r.prefix, { table: r.table, dt, hour: hh }));
    }
    return hours;
  }
  const tablePrefix = `${r.prefix === '' ? '' : `${r.prefix}/`}table=${r.table}/`;
  const fromDay = partitionTime(r.fromMs / 1000).dt;
  const lastMs = r.toMs - 1;
  const toDay = partitionTime(lastMs / 1000).dt;
  // StartAfter skips every day before `from` without listing it.
  const days = await listLevel(r, tablePrefix, `${tablePrefix}dt=${fromDay}`.slice(0, -1));
  for (const day of days) {
    const dt = /dt=(\d{4}-\d{2}-\d{2})\/$/.exec(day)?.[1];
    if (dt === undefined || dt < fromDay || dt > toDay) continue;
    for (const hourPrefix of await listLevel(r, day, day)) {
      const hh = /hour=(\d{2})\/$/.exec(hourPrefix)?.[1];
      if (hh === undefined) continue;
      const start = Date.parse(`${dt}T${hh}:00:00Z`);
      if (start + HOUR_MS <= r.fromMs || start >= r.toMs) continue;
      hours.push(hourPrefix);
    }
  }
  return hours;
}

/**
 * The archived rows of one table between `from` and `to` (deletion time), listing only the
 * dt/hour partitions in range. Rows come hour by hour, shard by shard, in sequence order, each
 * (shard, sequenceNumber) once even when a retried batch was cut differently and objects overlap.
 */
export async function* readArchiveRows(options: ReadArchiveOptions): AsyncGenerator<ArchiveRow> {
  const r = resolve(options);
  const seen = new Set<string>();
  for (const partition of await partitionsInRange(r)) {
    for (const object of await listPartition(r, partition)) {
      for (const row of await fetchRows(r, object.key)) {
        const ms = row.approximateCreationDateTime * 1000;
        if (ms < r.fromMs || ms >= r.toMs) continue;
        const id = `${row.shard}/${row.sequenceNumber}`;
        if (seen.has(id)) continue;
        seen.add(id);
        yield row;
      }
    }
  }
}

/** A row back as the classified record it was archived from (`parseStreamRecord` on the rebuilt raw record). */
export function rowToRecord(row: ArchiveRow): ClassifiedRecord {
  // `stream-<label>` stands in for a shard id the source did not know; do not invent one.
  const shardId = row.shard.startsWith('stream-') ? undefined : row.shard;
  return parseStreamRecord(rowToLambdaRecord(row), shardId === undefined ? undefined : { shardId });
}

/** `readArchiveRows`, as classified records. */
export async function* readArchive(options: ReadArchiveOptions): AsyncGenerator<ClassifiedRecord> {
  for await (const row of readArchiveRows(options)) yield rowToRecord(row);
}
