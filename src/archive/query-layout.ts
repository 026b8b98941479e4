// The archive as Athena (and any Hive-metastore engine) sees it: the columns of the NDJSON and the
// Parquet tables, their projected partitions and the de-duplicating view. One description for
// every place that declares the tables — infra/query.yml (compared by test), the CDK's
// ArchiveQueryTables, infra/query-views.cjs and docs/query.md (compared by test) — so a field
// added to ArchiveRow fails the build until each has its column.

import { type ArchiveRow, PARQUET_ROOT } from './format.js';

/** One column of an archive table: its name and Hive type. */
export interface QueryColumn {
  readonly name: string;
  readonly type: string;
}

/**
 * The NDJSON table's column of each ArchiveRow field (every field, the type says so): snake_case
 * names, so queries read alike over both layouts; `table` and `tenant` are `table_name` and
 * `tenant_id` because the partition is `table`, and the Parquet layout names them so; `ttl` is
 * `ttl_text`, the value as written. Keys, images, userIdentity and kinesis are JSON text.
 */
export const NDJSON_FIELD_COLUMNS: { readonly [F in keyof Required<ArchiveRow>]: QueryColumn } = {
  eventID: { name: 'event_id', type: 'string' },
  sequenceNumber: { name: 'sequence_number', type: 'string' },
  shard: { name: 'shard', type: 'string' },
  eventName: { name: 'event_name', type: 'string' },
  kind: { name: 'kind', type: 'string' },
  approximateCreationDateTime: { name: 'approximate_creation_date_time', type: 'double' },
  table: { name: 'table_name', type: 'string' },
  tenant: { name: 'tenant_id', type: 'string' },
  keys: { name: 'keys', type: 'string' },
  oldImage: { name: 'old_image', type: 'string' },
  newImage: { name: 'new_image', type: 'string' },
  ttlAttribute: { name: 'ttl_attribute', type: 'string' },
  ttl: { name: 'ttl_text', type: 'string' },
  eventSourceARN: { name: 'event_source_arn', type: 'string' },
  awsRegion: { name: 'aws_region', type: 'string' },
  userIdentity: { name: 'user_identity', type: 'string' },
  sizeBytes: { name: 'size_bytes', type: 'bigint' },
  streamViewType: { name: 'stream_view_type', type: 'string' },
  eventVersion: { name: 'event_version', type: 'string' },
  eventSource: { name: 'event_source', type: 'string' },
  kinesis: { name: 'kinesis', type: 'string' },
};

/** The NDJSON table's columns, in the rows' field order. */
export const NDJSON_COLUMNS: readonly QueryColumn[] = Object.values(NDJSON_FIELD_COLUMNS);

/**
 * The OpenX JSON SerDe's properties: keys inside the JSON text of keys and images keep their case
 * (`$.pk.S`; the SerDe lowercases them otherwise), so each column named apart from its field maps it.
 */
export function ndjsonSerdeParameters(): Record<string, string> {
  const parameters: Record<string, string> = { 'case.insensitive': 'false' };
  for (const [field, column] of Object.entries(NDJSON_FIELD_COLUMNS))
    if (column.name !== field) parameters[`mapping.${column.name}`] = field;
  return parameters;
}

/** The Parquet layout's columns (compaction with `format: 'parquet'`), typed item columns aside. */
export const PARQUET_COLUMNS: readonly QueryColumn[] = [
  { name: 'kind', type: 'string' },
  { name: 'event_name', type: 'string' },
  { name: 'table_name', type: 'string' },
  { name: 'tenant_id', type: 'string' },
  { name: 'pk', type: 'string' },
  { name: 'sk', type: 'string' },
  { name: 'keys', type: 'string' },
  { name: 'shard', type: 'string' },
  { name: 'sequence_number', type: 'string' },
  { name: 'event_id', type: 'string' },
  { name: 'approximate_creation_time', type: 'timestamp' },
  { name: 'ttl_attribute', type: 'string' },
  { name: 'ttl', type: 'timestamp' },
  { name: 'ttl_text', type: 'string' },
  { name: 'deleted_by', type: 'string' },
  { name: 'user_identity_type', type: 'string' },
  { name: 'old_image', type: 'string' },
  { name: 'new_image', type: 'string' },
  { name: 'event_source_arn', type: 'string' },
  { name: 'aws_region', type: 'string' },
  { name: 'stream_view_type', type: 'string' },
  { name: 'event_version', type: 'string' },
  { name: 'event_source', type: 'string' },
  { name: 'size_bytes', type: 'bigint' },
  { name: 'kinesis', type: 'string' },
];

/**
 * The partitions, the key's own `table=`, `dt=`, `hour=` folders. The tenant is a column, not a
 * partition (docs/query.md: injected projection would make every query name one escaped tenant,
 * enum needs every tenant listed, and both miss rows filed without a tenant folder).
 */
export const PARTITION_COLUMNS: readonly QueryColumn[] = [
  { name: 'table', type: 'string' },
  { name: 'dt', type: 'string' },
  { name: 'hour', type: 'string' },
];

/**
 * The NDJSON tables' location template tail below the archive prefix. Athena reads every object below a
 * partition's location, so the hour's covers its `tenant=` and `<shard>/` folders.
 */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Athena's placeholders, not a template literal
export const PARTITION_LOCATION = 'table=${table}/dt=${dt}/hour=${hour}/';

/**
 * The Parquet tables' folder below the archive prefix (format.ts's PARQUET_ROOT): compaction with
 * `format: 'parquet'` writes under `<prefix>parquet/table=…`, apart from the NDJSON objects, so
 * no partition location holds both formats. A Parquet table's location is `<prefix>parquet/`.
 */
export const PARQUET_LOCATION_ROOT = `${PARQUET_ROOT}/`;

/** The Parquet tables' location template tail below the archive prefix. */
export const PARQUET_PARTITION_LOCATION = `${PARQUET_LOCATION_ROOT}${PARTITION_LOCATION}`;

/**
 * The table parameters of partition projection, less the location template: `table` an enum of
 * the archived tables' key segments (comma-separated), `dt` a date over ten years, `hour` 00–23.
 */
export function projectionParameters(tables: string): Record<string, string> {
  return {
    'projection.enabled': 'true',
    'projection.table.type': 'enum',
    'projection.table.values': tables,
    'projection.dt.type': 'date',
    'projection.dt.format': 'yyyy-MM-dd',
    'projection.dt.range': 'NOW-10YEARS,NOW',
    'projection.dt.interval': '1',
    'projection.dt.interval.unit': 'DAYS',
    'projection.hour.type': 'integer',
    'projection.hour.range': '0,23',
    'projection.hour.digits': '2',
  };
}

/**
 * The de-duplicating view over an NDJSON table: each change once, by its eventID (a redelivery cut
 * elsewhere and a Kinesis copy under another sequence number alike). A change's copies share its
 * hour, so the window is partitioned by the partition columns too: filters on them reach the
 * table, and projection prunes as on the table itself.
 */
export function dedupViewSql(table: string): string {
  return `CREATE OR REPLACE VIEW ${table}_dedup AS
SELECT event_id, sequence_number, shard, event_name, kind, approximate_creation_date_time,
       table_name, tenant_id, keys, old_image, new_image, ttl_attribute, ttl_text,
       event_source_arn, aws_region, user_identity, size_bytes, stream_view_type,
       event_version, event_source, kinesis, "table", dt, hour
FROM (
  SELECT t.*, row_number() OVER (PARTITION BY "table", dt, hour, event_id) AS copy_number
  FROM ${table} t
)
WHERE copy_number = 1;`;
}
