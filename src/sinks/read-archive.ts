import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { defineOptions } from '../core/options.js';
import { parseStreamRecord } from '../records/index.js';
import type { ClassifiedRecord } from '../records/types.js';
import {
  type ArchiveRow,
  decodeObject,
  isStandInShard,
  parseObjectKey,
  partitionPrefix,
  partitionTime,
  rowToLambdaRecord,
  safeSegment,
} from './archive-format.js';
import { sha256Base64 } from './digest.js';
import { ArchiveFormatError } from './errors.js';
import { keyPrefix, PREFIX_OPTION } from './options.js';

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

const HOUR_MS = 3_600_000;

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

/** A time option (readArchive's and archive maintenance's `from` / `to`). */
export const TIME_OPTION = {
  kind: 'custom',
  expected: 'a Date, epoch milliseconds or an ISO-8601 string',
  check: (v: unknown) => Number.isFinite(toMillis(v)),
  required: true,
} as const;

const readOptions = defineOptions<ReadArchiveOptions>()('readArchive', {
  bucket: { kind: 'nonEmptyString', required: true },
  table: { kind: 'nonEmptyString', required: true },
  from: TIME_OPTION,
  to: TIME_OPTION,
  client: { kind: 'client' },
  prefix: PREFIX_OPTION,
  verifyChecksum: { kind: 'boolean', default: true },
  signal: { kind: 'object', expected: 'an AbortSignal', methods: ['throwIfAborted'] },
});

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
  const o = readOptions(options);
  const fromMs = toMillis(o.from);
  const toMs = toMillis(o.to);
  if (!(fromMs < toMs)) throw readOptions.fail("'from' must be before 'to'", 'from');
  return {
    client: o.client ?? new S3Client({}),
    bucket: o.bucket,
    prefix: keyPrefix(o.prefix),
    table: safeSegment(o.table),
    fromMs,
    toMs,
    verify: o.verifyChecksum,
    signal: o.signal,
  };
}

interface ListedObject {
  key: string;
  shard: string;
  first: bigint;
  last: bigint;
}

function byShardThenSequence(a: ListedObject, b: ListedObject): number {
  if (a.shard !== b.shard) return a.shard < b.shard ? -1 : 1;
  if (a.first !== b.first) return a.first < b.first ? -1 : 1;
  // The longer object first: a shorter overlapping one then adds nothing new.
  if (a.last !== b.last) return a.last < b.last ? 1 : -1;
  // Equal ranges under a stand-in shard segment are different shards' objects (told apart by
  // the key's tag): the key fixes their order, so a read returns rows in the same order every time.
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

const PARTITION_OF_KEY = /\/dt=(\d{4}-\d{2}-\d{2})\/hour=(\d{2})\/$/;

/**
 * The archive objects in range, one hour partition at a time in time order, each partition's
 * objects sorted by shard and first sequence number. Keys sort by dt then hour, so one listing
 * from StartAfter (the first hour in range) to the first key past `to` touches only the
 * partitions in range — a page per 1,000 objects, no per-hour probing.
 */
async function* partitionsInRange(r: ResolvedRead): AsyncGenerator<ListedObject[]> {
  const tablePrefix = `${r.prefix === '' ? '' : `${r.prefix}/`}table=${r.table}/`;
  const first = partitionTime(r.fromMs / 1000);
  // Without the trailing '/', StartAfter sorts just before every key of the first hour.
  const startAfter = partitionPrefix(r.prefix, { table: r.table, ...first }).slice(0, -1);
  let token: string | undefined;
  let current: { prefix: string; objects: ListedObject[] } | undefined;
  let pastRange = false;
  do {
    const page = await r.client.send(
      new ListObjectsV2Command({
        Bucket: r.bucket,
        Prefix: tablePrefix,
        StartAfter: startAfter,
        ContinuationToken: token,
      }),
      { abortSignal: r.signal },
    );
    for (const item of page.Contents ?? []) {
      const key = item.Key;
      const parsed = key === undefined ? undefined : parseObjectKey(key);
      if (key === undefined || parsed === undefined) continue;
      const prefix = key.slice(0, key.lastIndexOf('/', key.lastIndexOf('/') - 1) + 1);
      const partition = PARTITION_OF_KEY.exec(prefix);
      if (partition === null) continue;
      const start = Date.parse(`${partition[1]}T${partition[2]}:00:00Z`);
      if (start >= r.toMs) {
        pastRange = true;
        break;
      }
      if (start + HOUR_MS <= r.fromMs) continue;
      if (current === undefined || current.prefix !== prefix) {
        if (current !== undefined) yield current.objects.sort(byShardThenSequence);
        current = { prefix, objects: [] };
      }
      current.objects.push({
        key,
        shard: parsed.shard,
        first: BigInt(parsed.first),
        last: BigInt(parsed.last),
      });
    }
    token = page.IsTruncated && !pastRange ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  if (current !== undefined) yield current.objects.sort(byShardThenSequence);
}

async function fetchRows(r: ResolvedRead, key: string): Promise<ArchiveRow[]> {
  const response = await r.client.send(new GetObjectCommand({ Bucket: r.bucket, Key: key }), {
    abortSignal: r.signal,
  });
  if (response.Body === undefined) throw new ArchiveFormatError(key, 'empty response body');
  const body = await response.Body.transformToByteArray();
  const expected = response.Metadata?.sha256;
  if (r.verify && expected !== undefined && sha256Base64(body) !== expected) {
    throw new ArchiveFormatError(key, 'SHA-256 of the body does not match the object metadata');
  }
  return decodeObject(body, key);
}

/**
 * The archived rows of one table between `from` and `to` (deletion time), listing only the
 * dt/hour partitions in range. Rows come hour by hour, shard by shard, in sequence order, each
 * (shard, sequenceNumber, eventID) once even when a retried batch was cut differently and objects overlap.
 */
export async function* readArchiveRows(options: ReadArchiveOptions): AsyncGenerator<ArchiveRow> {
  const r = resolve(options);
  // A row's partition is a function of its own time, so copies of a row (overlapping objects of
  // a redelivery cut elsewhere) always share one hour partition: remembering one hour at a time
  // keeps memory bounded by the largest hour, not the whole range.
  const seen = new Set<string>();
  for await (const objects of partitionsInRange(r)) {
    seen.clear();
    for (const object of objects) {
      for (const row of await fetchRows(r, object.key)) {
        const ms = row.approximateCreationDateTime * 1000;
        if (ms < r.fromMs || ms >= r.toMs) continue;
        // Every copy of a row carries its record's eventID. Lambda gives no shard id, so all shards
        // of a stream share the `stream-<label>` segment, and AWS documents sequence numbers as
        // unique only within a shard: with the eventID, two shards' records never count as one.
        const id = `${row.shard}/${row.sequenceNumber}/${row.eventID}`;
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
  const shardId = isStandInShard(row.shard) ? undefined : row.shard;
  return parseStreamRecord(rowToLambdaRecord(row), shardId === undefined ? undefined : { shardId });
}

/** `readArchiveRows`, as classified records. */
export async function* readArchive(options: ReadArchiveOptions): AsyncGenerator<ClassifiedRecord> {
  for await (const row of readArchiveRows(options)) yield rowToRecord(row);
}
