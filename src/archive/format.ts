import { gunzipSync, gzipSync } from 'node:zlib';
import { sha256Base64, sha256Hex } from '../core/digest.js';
import { MalformedRecordError } from '../records/errors.js';
import type {
  AttributeMap,
  AttributeValue,
  ClassifiedRecord,
  LambdaStreamRecord,
  LambdaUserIdentity,
  RecordKind,
  StreamEventName,
  StreamViewType,
} from '../records/types.js';
import { ArchiveFormatError, ArchiveKeyError } from './errors.js';
import { recordTenant, type TenantPartitioner } from './partition.js';

/** Bumped only on an incompatible change; readers accept every version they know. */
export const ARCHIVE_FORMAT = 'tidewater-ndjson-v1';

/** The storage classes an archive may be written in, for validating configuration (e.g. environment). */
export const ARCHIVE_STORAGE_CLASSES = [
  'STANDARD',
  'STANDARD_IA',
  'GLACIER_IR',
  'GLACIER',
  'DEEP_ARCHIVE',
] as const;

/** A storage class an archive object may be written in. */
export type ArchiveStorageClass = (typeof ARCHIVE_STORAGE_CLASSES)[number];

/** A record the layout could not place or serialize: an archive sink reports it as its SinkFailure. */
export interface UnplacedRecord {
  sequenceNumber: string;
  error: unknown;
}

/**
 * One archived record: one JSON line. Keys and images stay raw DynamoDB JSON (Lambda shape,
 * binary as base64), so 38-digit numbers, binary and sets survive byte for byte; the remaining
 * fields are what it takes to rebuild the stream record exactly (see `rowToLambdaRecord`).
 */
export interface ArchiveRow {
  eventID: string;
  sequenceNumber: string;
  /** The shard segment of the key: the shard id, or `stream-<label>` when the source had none. */
  shard: string;
  eventName: StreamEventName;
  kind: RecordKind;
  /** Epoch seconds, as the stream delivered it. */
  approximateCreationDateTime: number;
  table: string;
  /**
   * The tenant id (decoded, as `partitionBy` returned it — not the key's escaped segment), in
   * every row a sink partitioning by tenant writes, its objects over `maxPartitionsPerBatch`
   * included: a query groups or filters by it without parsing keys. Absent in rows written
   * without `partitionBy` (and before this field existed).
   */
  tenant?: string;
  keys: AttributeMap;
  oldImage?: AttributeMap;
  newImage?: AttributeMap;
  /**
   * The TTL attribute's name and its value's text (`N`) in the item the change left: the new image
   * of an insert or a modify, the old image of a delete (the other image when that one is absent);
   * null when absent.
   */
  ttlAttribute: string;
  ttl: string | null;
  eventSourceARN?: string;
  awsRegion?: string;
  userIdentity?: LambdaUserIdentity;
  sizeBytes?: number;
  streamViewType?: StreamViewType;
  eventVersion?: string;
  eventSource?: string;
  /**
   * A record read from Kinesis Data Streams for DynamoDB: its partition key and exact creation
   * time. Kinesis may carry one change twice under two sequence numbers; such rows are one change
   * by their eventID (archiveRowId).
   */
  kinesis?: { partitionKey: string; creationTime: number; precision: 'MILLISECOND' | 'MICROSECOND' };
}

/**
 * What names one change in an archive, for the readers and compaction that keep each once. A
 * stream's change is (shard, sequenceNumber, eventID): sequence numbers are unique per shard only,
 * and Lambda gives no shard id. A Kinesis copy is its DynamoDB eventID, unique per change, since a
 * duplicate arrives under another sequence number.
 */
export function archiveRowId(
  row: Pick<ArchiveRow, 'shard' | 'sequenceNumber' | 'eventID' | 'kinesis'>,
): string {
  return row.kinesis !== undefined
    ? `kinesis/${row.eventID}`
    : `${row.shard}/${row.sequenceNumber}/${row.eventID}`;
}

/** The partition an archived record belongs to, and the object key fields shared by its group. */
export interface ArchivePartition {
  table: string;
  dt: string;
  hour: string;
  shard: string;
  /** The `tenant=<segment>` value (see `tenantSegment`) when the archive is partitioned by tenant. */
  tenant?: string;
}

/** Characters outside this set are replaced in key segments, so keys are safe as S3 keys and file names. */
const UNSAFE_SEGMENT = /[^A-Za-z0-9._=-]/g;

export function safeSegment(text: string): string {
  return text.replace(UNSAFE_SEGMENT, '_');
}

/** Prefix of the shard segment that stands in for a shard id the source did not carry. */
const STAND_IN_SHARD = 'stream-';

/**
 * Lambda events carry no shard id, so the stream label stands in: one Lambda batch always comes
 * from one shard, and the label keeps keys deterministic per batch. GetRecords sources set shardId.
 */
export function shardSegment(record: Pick<ClassifiedRecord, 'shardId' | 'eventSourceARN'>): string {
  if (record.shardId !== undefined) return safeSegment(record.shardId);
  const arn = record.eventSourceARN;
  const at = arn === undefined ? -1 : arn.lastIndexOf('/stream/');
  if (arn === undefined || at < 0) return `${STAND_IN_SHARD}unknown`;
  return safeSegment(`${STAND_IN_SHARD}${arn.slice(at + 8)}`);
}

/** True for a `stream-<label>` segment: the records' shard is unknown, and several shards share it. */
export function isStandInShard(segment: string): boolean {
  return segment.startsWith(STAND_IN_SHARD);
}

/** Hex digits of the tag: 48 bits, so two shards' equal sequence ranges practically never meet. */
export const TAG_LENGTH = 12;

/**
 * The key tag of an object whose records' shard is unknown, else undefined. Every shard of a
 * stream shares the `stream-<label>` segment and AWS documents sequence numbers as unique only
 * within a shard, so two shards' objects with equal first and last sequence numbers would share
 * a key: under If-None-Match the second PUT gets 412 and its batch counts as written without
 * being stored; a plain PUT overwrites the first. The eventID of the object's first record
 * separates them (unique per record, the same when the batch is redelivered, so a redelivery
 * still lands on its own key). It is hashed rather than cut, so eventIDs of any length or shape
 * (sharing a prefix, holding characters keys cannot) give a fixed, key-safe tag.
 */
export function objectTag(shard: string, firstEventID: string): string | undefined {
  if (!isStandInShard(shard)) return undefined;
  return sha256Hex(firstEventID).slice(0, TAG_LENGTH);
}

/** `dt=YYYY-MM-DD`, `hour=HH` in UTC of the record's ApproximateCreationDateTime (the deletion time). */
export function partitionTime(epochSeconds: number): { dt: string; hour: string } {
  const iso = new Date(Math.floor(epochSeconds) * 1000).toISOString();
  return { dt: iso.slice(0, 10), hour: iso.slice(11, 13) };
}

export function partitionOf(record: ClassifiedRecord, tableFallback: string | undefined): ArchivePartition {
  const table = record.tableName ?? tableFallback;
  if (table === undefined) {
    throw new ArchiveKeyError('no table name (no eventSourceARN and no `table` option)', record);
  }
  const created = record.approximateCreationTime;
  if (created === undefined) {
    // DynamoDB stamps every stream record: one without is not a record it sent (dead-lettered at once).
    throw new MalformedRecordError(
      'invalid-creation-time',
      'no ApproximateCreationDateTime to file the record under (DynamoDB sends one with every record)',
      {
        eventID: record.eventID,
        sequenceNumber: record.sequenceNumber,
        path: 'dynamodb.ApproximateCreationDateTime',
      },
    );
  }
  return { table: safeSegment(table), ...partitionTime(created), shard: shardSegment(record) };
}

/** `<prefix>/table=<t>/dt=<d>/hour=<h>/` — also what readArchive lists. */
export function partitionPrefix(prefix: string, p: Omit<ArchivePartition, 'shard'>): string {
  return `${prefix === '' ? '' : `${prefix}/`}table=${p.table}/dt=${p.dt}/hour=${p.hour}/`;
}

/** The two encodings of an archive object: NDJSON+gzip (what the sinks write) and Apache Parquet (compaction's option). */
export type ArchiveObjectFormat = 'ndjson' | 'parquet';

/**
 * `<partition prefix>[tenant=<segment>/]<shard>/<first>-<last>.ndjson.gz`, or
 * `<first>-<last>-<tag>.ndjson.gz` with the tag `objectTag` gives for a stand-in shard segment
 * (compaction tags every object it writes).
 */
export function objectKey(
  prefix: string,
  p: ArchivePartition,
  firstSeq: string,
  lastSeq: string,
  tag?: string,
): string {
  const name = tag === undefined ? `${firstSeq}-${lastSeq}` : `${firstSeq}-${lastSeq}-${tag}`;
  const tenant = p.tenant === undefined ? '' : `tenant=${p.tenant}/`;
  return `${partitionPrefix(prefix, p)}${tenant}${p.shard}/${name}.ndjson.gz`;
}

/** The folder below an archive's prefix that holds its Parquet objects (see parquetRoot). */
export const PARQUET_ROOT = 'parquet';

/**
 * `<prefix>/parquet` (`parquet` for no prefix): the root of an archive's Parquet objects, beside
 * its NDJSON objects' `<prefix>/table=…`. Athena reads every object below a partition location,
 * so no folder may hold both formats: each format's table has a root of its own.
 */
export function parquetRoot(prefix: string): string {
  return prefix === '' ? PARQUET_ROOT : `${prefix}/${PARQUET_ROOT}`;
}

/**
 * A Parquet object's key (always tagged, as compaction writes it), under the archive's Parquet
 * root: `<prefix>/parquet/table=<t>/dt=<d>/hour=<h>/[tenant=<segment>/]<shard>-<first>-<last>-<tag>.parquet`.
 * The shard is part of the file name, so every folder under the root is a `key=value` partition
 * a query engine reads. A function apart from objectKey, so the sinks' bundles leave it out.
 */
export function parquetObjectKey(
  prefix: string,
  p: ArchivePartition,
  firstSeq: string,
  lastSeq: string,
  tag: string,
): string {
  const tenant = p.tenant === undefined ? '' : `tenant=${p.tenant}/`;
  return `${partitionPrefix(parquetRoot(prefix), p)}${tenant}${p.shard}-${firstSeq}-${lastSeq}-${tag}.parquet`;
}

/** Every part of an archive object's key. */
export interface ArchiveKeyParts {
  key: string;
  /**
   * `<prefix>/table=<t>/dt=<d>/hour=<h>/`: the hour the object belongs to, in either format. An
   * NDJSON object's key starts with it; a Parquet object's lies under the Parquet root
   * (`<prefix>/parquet/table=…`) and names the same hour.
   */
  hourPrefix: string;
  table: string;
  dt: string;
  hour: string;
  /** The tenant segment value, for an object of a tenant partition. */
  tenant?: string;
  shard: string;
  first: string;
  last: string;
  tag?: string;
  format: ArchiveObjectFormat;
}

// Literals (their `{12}` is TAG_LENGTH), so a bundle that writes archives and never parses a key
// leaves them out: a RegExp built from a template counts as a side effect of loading the module.
const ARCHIVE_KEY =
  /(?:^|\/)table=([^/]+)\/dt=(\d{4}-\d{2}-\d{2})\/hour=(\d{2})\/(?:tenant=([^/]+)\/)?([^/]+)\/(\d+)-(\d+)(?:-([0-9a-f]{12}))?\.ndjson\.gz$/;
// The shard is the file name up to its last three `-` parts (digits, digits, hex tag): a greedy
// match takes the longest, so a shard id holding `-` and digits still parses back whole. The key
// starts at the Parquet root's `parquet/` segment, which is not part of the hour: the hour's
// prefix is what precedes it. (An NDJSON key is told apart by its file name first, so an NDJSON
// archive whose prefix ends in `parquet` parses as such.)
const PARQUET_KEY =
  /(?:^|\/)parquet\/table=([^/]+)\/dt=(\d{4}-\d{2}-\d{2})\/hour=(\d{2})\/(?:tenant=([^/]+)\/)?([^/]+)-(\d+)-(\d+)-([0-9a-f]{12})\.parquet$/;

/**
 * Parses a key `objectKey` or `parquetObjectKey` wrote (with or without a tenant segment);
 * undefined for any other key, a `.parquet` object outside a Parquet root included.
 */
export function parseArchiveKey(key: string): ArchiveKeyParts | undefined {
  let format: ArchiveObjectFormat = 'ndjson';
  let m = ARCHIVE_KEY.exec(key);
  if (m === null) {
    m = PARQUET_KEY.exec(key);
    if (m === null) return undefined;
    format = 'parquet';
  }
  const [, table, dt, hour, tenant, shard, first, last, tag] = m as unknown as string[];
  // Where the match starts: `table=` of an NDJSON key, the Parquet root's `parquet/` of a Parquet
  // key; what precedes it is the archive's prefix either way.
  const start = m.index + (m[0].startsWith('/') ? 1 : 0);
  const parts: ArchiveKeyParts = {
    key,
    hourPrefix: `${key.slice(0, start)}table=${table}/dt=${dt}/hour=${hour}/`,
    table: table as string,
    dt: dt as string,
    hour: hour as string,
    shard: shard as string,
    first: first as string,
    last: last as string,
    format,
  };
  if (tenant !== undefined) parts.tenant = tenant;
  if (tag !== undefined) parts.tag = tag;
  return parts;
}

/** The format of an archive object, from its key's file name. */
export function objectFormat(key: string): ArchiveObjectFormat {
  return key.endsWith('.parquet') ? 'parquet' : 'ndjson';
}

function ttlText(value: AttributeValue | undefined): string | null {
  if (value === undefined) return null;
  if (value.N !== undefined) return value.N;
  return value.S ?? null;
}

/** The row for one record. Reads only `raw`, so no image is unmarshalled on the archive path. */
export function toArchiveRow(
  record: ClassifiedRecord,
  partition: ArchivePartition,
  ttlAttribute: string,
  tenant?: string,
): ArchiveRow {
  const raw = record.raw;
  const d = raw.dynamodb;
  const row: ArchiveRow = {
    eventID: raw.eventID,
    sequenceNumber: d.SequenceNumber,
    shard: partition.shard,
    eventName: raw.eventName,
    kind: record.kind,
    approximateCreationDateTime: d.ApproximateCreationDateTime as number,
    table: partition.table,
    keys: d.Keys,
    ttlAttribute,
    // A modify that sets or moves the TTL: the row says when the item now expires, not before.
    ttl: ttlText(
      raw.eventName === 'REMOVE'
        ? (d.OldImage?.[ttlAttribute] ?? d.NewImage?.[ttlAttribute])
        : (d.NewImage?.[ttlAttribute] ?? d.OldImage?.[ttlAttribute]),
    ),
  };
  if (tenant !== undefined) row.tenant = tenant;
  if (d.OldImage !== undefined) row.oldImage = d.OldImage;
  if (d.NewImage !== undefined) row.newImage = d.NewImage;
  if (raw.eventSourceARN !== undefined) row.eventSourceARN = raw.eventSourceARN;
  if (raw.awsRegion !== undefined) row.awsRegion = raw.awsRegion;
  if (raw.userIdentity !== undefined) row.userIdentity = raw.userIdentity;
  if (d.SizeBytes !== undefined) row.sizeBytes = d.SizeBytes;
  if (d.StreamViewType !== undefined) row.streamViewType = d.StreamViewType;
  if (raw.eventVersion !== undefined) row.eventVersion = raw.eventVersion;
  if (raw.eventSource !== undefined) row.eventSource = raw.eventSource;
  const origin = record.origin;
  if (origin.source === 'kinesis') {
    row.kinesis = {
      partitionKey: origin.partitionKey,
      creationTime: origin.creationTime,
      precision: origin.precision,
    };
  }
  return row;
}

/** The stream record a row was made from, in the Lambda shape (what `parseStreamRecord` takes). */
export function rowToLambdaRecord(row: ArchiveRow): LambdaStreamRecord {
  const record: LambdaStreamRecord = {
    eventID: row.eventID,
    eventName: row.eventName,
    dynamodb: {
      ApproximateCreationDateTime: row.approximateCreationDateTime,
      Keys: row.keys,
      SequenceNumber: row.sequenceNumber,
    },
  };
  if (row.eventVersion !== undefined) record.eventVersion = row.eventVersion;
  if (row.eventSource !== undefined) record.eventSource = row.eventSource;
  if (row.awsRegion !== undefined) record.awsRegion = row.awsRegion;
  if (row.eventSourceARN !== undefined) record.eventSourceARN = row.eventSourceARN;
  if (row.userIdentity !== undefined) record.userIdentity = row.userIdentity;
  if (row.newImage !== undefined) record.dynamodb.NewImage = row.newImage;
  if (row.oldImage !== undefined) record.dynamodb.OldImage = row.oldImage;
  if (row.sizeBytes !== undefined) record.dynamodb.SizeBytes = row.sizeBytes;
  if (row.streamViewType !== undefined) record.dynamodb.StreamViewType = row.streamViewType;
  return record;
}

/** A group's rows cut into NDJSON chunks of at most `maxBytes` uncompressed (a single larger row stands alone). */
export interface EncodedChunk {
  lines: string[];
  first: string;
  last: string;
  count: number;
  records: ClassifiedRecord[];
}

/**
 * `failed` receives the records that cannot be serialized (a RangeError from nesting too deep for
 * the stack, in a record that skipped the pipeline's image check): each fails alone as malformed.
 * `tenants[i]`, when given, is the tenant id of `records[i]`, written into its row.
 */
export function chunkRows(
  records: readonly ClassifiedRecord[],
  partition: ArchivePartition,
  ttlAttribute: string,
  maxBytes: number,
  failed?: UnplacedRecord[],
  tenants?: readonly string[],
): EncodedChunk[] {
  const chunks: EncodedChunk[] = [];
  let current: EncodedChunk | undefined;
  let size = 0;
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as ClassifiedRecord;
    let line: string;
    try {
      line = `${JSON.stringify(toArchiveRow(record, partition, ttlAttribute, tenants?.[i]))}\n`;
    } catch (error) {
      if (failed === undefined) throw error;
      failed.push({ sequenceNumber: record.sequenceNumber, error: unserializable(record, error) });
      continue;
    }
    // Length in UTF-16 units bounds UTF-8 bytes from below; Buffer.byteLength is exact and cheap enough per line.
    const bytes = Buffer.byteLength(line);
    if (current === undefined || (size + bytes > maxBytes && current.count > 0)) {
      current = {
        lines: [],
        first: record.sequenceNumber,
        last: record.sequenceNumber,
        count: 0,
        records: [],
      };
      chunks.push(current);
      size = 0;
    }
    current.lines.push(line);
    current.records.push(record);
    current.last = record.sequenceNumber;
    current.count++;
    size += bytes;
  }
  return chunks;
}

function unserializable(record: ClassifiedRecord, error: unknown): MalformedRecordError {
  return new MalformedRecordError(
    'invalid-attribute-value',
    `the record cannot be written as JSON (${error instanceof Error ? error.message : String(error)})`,
    { eventID: record.eventID, sequenceNumber: record.sequenceNumber, path: 'dynamodb' },
    { cause: error },
  );
}

export interface EncodedObject {
  body: Buffer;
  /** Base64 SHA-256 of the body: S3's x-amz-checksum-sha256 format. */
  sha256: string;
}

export function encodeObject(lines: readonly string[]): EncodedObject {
  const body = gzipSync(lines.join(''));
  return { body, sha256: sha256Base64(body) };
}

/** Decodes one NDJSON+gzip archive object to its rows. `key` names the object in errors. */
export function decodeObject(body: Uint8Array, key: string): ArchiveRow[] {
  let text: string;
  try {
    text = gunzipSync(body).toString('utf8');
  } catch (error) {
    throw new ArchiveFormatError(key, 'not a gzip stream', undefined, { cause: error });
  }
  const rows: ArchiveRow[] = [];
  let start = 0;
  let line = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    line++;
    const json = text.slice(start, end);
    start = end + 1;
    if (json === '') continue;
    let row: unknown;
    try {
      row = JSON.parse(json);
    } catch (error) {
      throw new ArchiveFormatError(key, 'invalid JSON', line, { cause: error });
    }
    if (!isRow(row)) throw new ArchiveFormatError(key, 'not an archive row', line);
    rows.push(row);
  }
  return rows;
}

function isRow(value: unknown): value is ArchiveRow {
  if (value === null || typeof value !== 'object') return false;
  const row = value as Record<string, unknown>;
  return (
    typeof row.eventID === 'string' &&
    typeof row.sequenceNumber === 'string' &&
    typeof row.shard === 'string' &&
    typeof row.eventName === 'string' &&
    typeof row.approximateCreationDateTime === 'number' &&
    row.keys !== null &&
    typeof row.keys === 'object'
  );
}

/** How a batch is split by tenant: the partitioner and how many tenants one batch may spread over. */
export interface TenantSplit {
  partitionBy: TenantPartitioner;
  maxPartitions: number;
}

/** One group of a batch: its partition, its records in stream order and, partitioned by tenant, their tenant ids. */
export interface PartitionGroup {
  partition: ArchivePartition;
  records: ClassifiedRecord[];
  /** `tenants[i]` is the tenant id of `records[i]`: also in an unpartitioned group, over the bound. */
  tenants?: string[];
}

/**
 * Groups records by partition, keeping stream order inside each group and groups in first-seen
 * order. With `tenants`, the first `maxPartitions` distinct tenants of the batch (in stream order,
 * so a redelivered batch groups the same way) get groups of their own; later tenants' records go
 * to their partition's unpartitioned group (`overflow` counts them), still named with their tenant
 * id for their rows. A record the partitioner cannot place fails alone.
 */
export function groupByPartition(
  records: readonly ClassifiedRecord[],
  tableFallback: string | undefined,
  tenants?: TenantSplit,
): {
  groups: Map<string, PartitionGroup>;
  failed: UnplacedRecord[];
  overflow: number;
} {
  const groups = new Map<string, PartitionGroup>();
  const failed: UnplacedRecord[] = [];
  const admitted = new Set<string>();
  let overflow = 0;
  for (const record of records) {
    let partition: ArchivePartition;
    let tenantId: string | undefined;
    try {
      partition = partitionOf(record, tableFallback);
      if (tenants !== undefined) {
        const { tenant, segment } = recordTenant(tenants.partitionBy, record);
        tenantId = tenant;
        if (admitted.has(segment) || admitted.size < tenants.maxPartitions) {
          admitted.add(segment);
          partition.tenant = segment;
        } else overflow++;
      }
    } catch (error) {
      failed.push({ sequenceNumber: record.sequenceNumber, error });
      continue;
    }
    const id = `${partition.table}/${partition.dt}/${partition.hour}/${partition.tenant ?? ''}/${partition.shard}`;
    let group = groups.get(id);
    if (group === undefined) {
      group = tenantId === undefined ? { partition, records: [] } : { partition, records: [], tenants: [] };
      groups.set(id, group);
    }
    group.records.push(record);
    if (tenantId !== undefined) group.tenants?.push(tenantId);
  }
  return { groups, failed, overflow };
}
