import { canonicalNumberText } from '../records/number-canonical.js';
import type { AttributeMap, AttributeValue, LambdaUserIdentity } from '../records/types.js';
import type { ArchiveRow } from './format.js';
import type { TypedColumnKind, TypedColumns } from './typed-columns.js';

// The Parquet archive's columns (docs/archive.md#parquet, the shared layout spec): an ArchiveRow
// cut into query-friendly columns and put back together from them. Pure data, no Parquet library:
// parquet-object.ts writes and reads the bytes.

/** The format of a Parquet archive object (its `format` metadata and key-value metadata); bumped as ARCHIVE_FORMAT. */
export const PARQUET_ARCHIVE_FORMAT = 'tidewater-parquet-v1';

/** The physical and logical type of a column, as the Parquet schema declares it. */
export type ColumnType = 'string' | 'timestamp' | 'int64' | 'boolean' | { decimalScale: number };

/** One column of an object: its name, type, whether it may be null, and one value per row. */
export interface ArchiveColumn {
  name: string;
  type: ColumnType;
  required: boolean;
  values: (string | Date | bigint | boolean | null)[];
}

/** Which key attribute is the partition key (`pk` column) and which the sort key (`sk`). */
export interface KeyAttributes {
  partition: string;
  sort?: string | undefined;
}

/** The conventional single-table names, and tenantFromPartitionKey's default attribute. */
export const DEFAULT_KEY_ATTRIBUTES: KeyAttributes = { partition: 'pk', sort: 'sk' };

/** What a Parquet object was written with: kept in its key-value metadata, so a rewrite (erase) keeps it. */
export interface ParquetSettings {
  keyAttributes: KeyAttributes;
  typedColumns: TypedColumns;
}

/** Sequence numbers as text that sorts as numbers (up to 40 digits). */
const SEQUENCE_WIDTH = 40;
/** Seconds since the epoch of 2500-01-01: a TTL beyond is not epoch seconds (a millisecond one). */
const YEAR_2500_SECONDS = 16_725_225_600;
const MAX_PRECISION = 38;

/** An attribute value as text: S as is, N in canonical form, B (base64) as is; undefined for any other type. */
function keyText(value: AttributeValue | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) return canonicalNumberText(value.N);
  if (value.B !== undefined) return String(value.B);
  return undefined;
}

/**
 * The partition and sort key attributes of a row's keys: the named ones when the keys hold them;
 * otherwise a one-attribute key is the partition key, and of two the one not named as sort key
 * (the first, in the keys' order) is.
 */
function keyPair(keys: AttributeMap, names: KeyAttributes): { pk: string; sk: string | undefined } {
  if (keys[names.partition] !== undefined) {
    const sk = names.sort === undefined ? undefined : keys[names.sort];
    return { pk: names.partition, sk: sk === undefined ? otherThan(keys, names.partition) : names.sort };
  }
  const attributes = Object.keys(keys);
  const pk = attributes.find((a) => a !== names.sort) ?? (attributes[0] as string);
  return { pk, sk: otherThan(keys, pk) };
}

function otherThan(keys: AttributeMap, name: string): string | undefined {
  return Object.keys(keys).find((a) => a !== name);
}

/** Epoch seconds as a Date of whole milliseconds (the TIMESTAMP columns' unit). */
function secondsToDate(seconds: number): Date {
  return new Date(Math.round(seconds * 1000));
}

/** The TTL as a timestamp, when the TTL attribute is a Number of epoch seconds (a millisecond TTL is not). */
function ttlTimestamp(row: ArchiveRow): Date | null {
  const value = row.oldImage?.[row.ttlAttribute] ?? row.newImage?.[row.ttlAttribute];
  if (value?.N === undefined || row.ttl === null) return null;
  const seconds = Number(row.ttl);
  return Number.isFinite(seconds) && seconds >= 0 && seconds < YEAR_2500_SECONDS
    ? secondsToDate(seconds)
    : null;
}

/** A number's exact decimal parts: its digits without the point, and how many follow it. */
function decimalParts(text: string): { sign: string; digits: string; scale: number; intDigits: number } {
  const canonical = canonicalNumberText(text);
  const sign = canonical.startsWith('-') ? '-' : '';
  const [int = '', frac = ''] = canonical.slice(sign.length).split('.');
  const intDigits = int === '0' ? 0 : int.length;
  return { sign, digits: `${int}${frac}`, scale: frac.length, intDigits };
}

/**
 * A number column's values as unscaled integers at one scale, or undefined when some value does
 * not fit DECIMAL(38, s) exactly (s the largest scale seen): then the column is left out.
 */
function decimalColumn(
  texts: readonly (string | undefined)[],
): { scale: number; values: (bigint | null)[] } | undefined {
  const parts = texts.map((t) => (t === undefined ? undefined : decimalParts(t)));
  let scale = 0;
  for (const p of parts) if (p !== undefined) scale = Math.max(scale, p.scale);
  const values: (bigint | null)[] = [];
  for (const p of parts) {
    if (p === undefined) {
      values.push(null);
      continue;
    }
    if (p.intDigits + scale > MAX_PRECISION) return undefined;
    values.push(BigInt(`${p.sign}${p.digits}${'0'.repeat(scale - p.scale)}`));
  }
  return { scale, values };
}

function itemValue(row: ArchiveRow, name: string): AttributeValue | undefined {
  return (row.newImage ?? row.oldImage)?.[name];
}

function typedColumn(
  rows: readonly ArchiveRow[],
  name: string,
  kind: TypedColumnKind,
): ArchiveColumn | undefined {
  const column = `item_${name}`;
  if (kind === 'string')
    return {
      name: column,
      type: 'string',
      required: false,
      values: rows.map((r) => itemValue(r, name)?.S ?? null),
    };
  if (kind === 'boolean')
    return {
      name: column,
      type: 'boolean',
      required: false,
      values: rows.map((r) => itemValue(r, name)?.BOOL ?? null),
    };
  const decimal = decimalColumn(rows.map((r) => itemValue(r, name)?.N));
  if (decimal === undefined) return undefined;
  return { name: column, type: { decimalScale: decimal.scale }, required: false, values: decimal.values };
}

const text = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

/** The columns of one object's rows, in the spec's order, typed columns last. */
export function rowsToColumns(rows: readonly ArchiveRow[], settings: ParquetSettings): ArchiveColumn[] {
  const keys = rows.map((r) => keyPair(r.keys, settings.keyAttributes));
  const column = (
    name: string,
    type: ColumnType,
    required: boolean,
    value: (row: ArchiveRow, i: number) => string | Date | bigint | boolean | null | undefined,
  ): ArchiveColumn => ({ name, type, required, values: rows.map((r, i) => value(r, i) ?? null) });
  const columns = [
    column('kind', 'string', true, (r) => r.kind),
    column('event_name', 'string', true, (r) => r.eventName),
    column('table_name', 'string', true, (r) => r.table),
    column('tenant_id', 'string', false, (r) => r.tenant),
    column('pk', 'string', true, (r, i) => keyText(r.keys[keys[i]?.pk as string]) ?? ''),
    column('sk', 'string', false, (r, i) => {
      const sk = keys[i]?.sk;
      return sk === undefined ? null : keyText(r.keys[sk]);
    }),
    column('keys', 'string', true, (r) => JSON.stringify(r.keys)),
    column('shard', 'string', true, (r) => r.shard),
    column('sequence_number', 'string', true, (r) => r.sequenceNumber.padStart(SEQUENCE_WIDTH, '0')),
    column('event_id', 'string', true, (r) => r.eventID),
    column('approximate_creation_time', 'timestamp', true, (r) =>
      secondsToDate(r.approximateCreationDateTime),
    ),
    column('ttl_attribute', 'string', true, (r) => r.ttlAttribute),
    column('ttl', 'timestamp', false, ttlTimestamp),
    column('ttl_text', 'string', false, (r) => r.ttl),
    column('deleted_by', 'string', false, (r) => r.userIdentity?.principalId),
    column('user_identity_type', 'string', false, (r) => r.userIdentity?.type),
    column('old_image', 'string', false, (r) => text(r.oldImage)),
    column('new_image', 'string', false, (r) => text(r.newImage)),
    column('event_source_arn', 'string', false, (r) => r.eventSourceARN),
    column('aws_region', 'string', false, (r) => r.awsRegion),
    column('stream_view_type', 'string', false, (r) => r.streamViewType),
    column('event_version', 'string', false, (r) => r.eventVersion),
    column('event_source', 'string', false, (r) => r.eventSource),
    column('size_bytes', 'int64', false, (r) => (r.sizeBytes === undefined ? null : BigInt(r.sizeBytes))),
    column('kinesis', 'string', false, (r) => text(r.kinesis)),
  ];
  for (const [name, kind] of Object.entries(settings.typedColumns)) {
    const typed = typedColumn(rows, name, kind);
    if (typed !== undefined) columns.push(typed);
  }
  return columns;
}

/** The columns a reader needs to rebuild an ArchiveRow (the derived ones — pk, sk, ttl, item_* — are not read). */
export const ROW_COLUMNS = [
  'kind',
  'event_name',
  'table_name',
  'tenant_id',
  'keys',
  'shard',
  'sequence_number',
  'event_id',
  'approximate_creation_time',
  'ttl_attribute',
  'ttl_text',
  'deleted_by',
  'user_identity_type',
  'old_image',
  'new_image',
  'event_source_arn',
  'aws_region',
  'stream_view_type',
  'event_version',
  'event_source',
  'size_bytes',
  'kinesis',
] as const;

/** One row as a Parquet reader gives it: ROW_COLUMNS' values (null where absent). */
export type ColumnRecord = Partial<Record<(typeof ROW_COLUMNS)[number], unknown>>;

function str(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : String(value);
}

/**
 * The ArchiveRow a record of columns holds, with the fields in the order toArchiveRow writes them,
 * so a rebuilt row serializes as the original did.
 */
export function columnsToRow(record: ColumnRecord): ArchiveRow {
  const created = record.approximate_creation_time;
  const createdMs = created instanceof Date ? created.getTime() : Number(created);
  const row: ArchiveRow = {
    eventID: String(record.event_id),
    sequenceNumber: String(record.sequence_number).replace(/^0+(?=\d)/, ''),
    shard: String(record.shard),
    eventName: String(record.event_name) as ArchiveRow['eventName'],
    kind: String(record.kind) as ArchiveRow['kind'],
    approximateCreationDateTime: createdMs / 1000,
    table: String(record.table_name),
    keys: JSON.parse(String(record.keys)) as AttributeMap,
    ttlAttribute: String(record.ttl_attribute),
    ttl: str(record.ttl_text) ?? null,
  };
  const tenant = str(record.tenant_id);
  if (tenant !== undefined) row.tenant = tenant;
  const oldImage = str(record.old_image);
  if (oldImage !== undefined) row.oldImage = JSON.parse(oldImage) as AttributeMap;
  const newImage = str(record.new_image);
  if (newImage !== undefined) row.newImage = JSON.parse(newImage) as AttributeMap;
  const arn = str(record.event_source_arn);
  if (arn !== undefined) row.eventSourceARN = arn;
  const region = str(record.aws_region);
  if (region !== undefined) row.awsRegion = region;
  const type = str(record.user_identity_type);
  const principalId = str(record.deleted_by);
  if (type !== undefined || principalId !== undefined) {
    const identity: Partial<LambdaUserIdentity> = {};
    if (type !== undefined) identity.type = type;
    if (principalId !== undefined) identity.principalId = principalId;
    row.userIdentity = identity as LambdaUserIdentity;
  }
  if (record.size_bytes !== null && record.size_bytes !== undefined)
    row.sizeBytes = Number(record.size_bytes);
  const view = str(record.stream_view_type);
  if (view !== undefined) row.streamViewType = view as NonNullable<ArchiveRow['streamViewType']>;
  const version = str(record.event_version);
  if (version !== undefined) row.eventVersion = version;
  const source = str(record.event_source);
  if (source !== undefined) row.eventSource = source;
  const kinesis = str(record.kinesis);
  if (kinesis !== undefined) row.kinesis = JSON.parse(kinesis) as NonNullable<ArchiveRow['kinesis']>;
  return row;
}
