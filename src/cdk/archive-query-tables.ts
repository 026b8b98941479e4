// The archive's Athena tables, as infra/query.yml deploys them (docs/query.md): a Glue database,
// one projected table per archive (TTL deletes, user deletes, a change log) and format (NDJSON,
// Parquet), and each NDJSON table's de-duplicating view as a saved Athena query. The columns,
// projection and view come from src/archive/query-layout.ts, which the serverless templates'
// tests compare against, so both deployments declare the same tables.

import * as athena from 'aws-cdk-lib/aws-athena';
import * as glue from 'aws-cdk-lib/aws-glue';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Stack } from 'aws-cdk-lib/core';
import { Construct } from 'constructs';
import {
  dedupViewSql,
  NDJSON_COLUMNS,
  ndjsonSerdeParameters,
  PARQUET_COLUMNS,
  PARQUET_LOCATION_ROOT,
  PARQUET_PARTITION_LOCATION,
  PARTITION_COLUMNS,
  PARTITION_LOCATION,
  projectionParameters,
  type QueryColumn,
} from '../archive/query-layout.js';
import { defineOptions } from '../core/options.js';
import { userDeletePrefix } from '../handlers/archive-settings.js';
import { KEY_PREFIX_OPTION } from '../handlers/key-prefix.js';

/** A layout the archive's objects are in: what the sinks write, or what Parquet compaction writes. */
export type ArchiveQueryFormat = 'ndjson' | 'parquet';

const FORMATS: readonly ArchiveQueryFormat[] = ['ndjson', 'parquet'];

/** Options of ArchiveQueryTables: the bucket, its archives' prefixes, the tables and the formats. */
export interface ArchiveQueryTablesProps {
  /** The archive bucket. */
  readonly bucket: s3.IBucket;
  /**
   * The archived DynamoDB tables' names (as the keys' `table=` segment holds them): the values of
   * the projected `table` partition. Tokens (`table.tableName`) are fine.
   */
  readonly tables: readonly string[];
  /** The Glue database (lowercase letters, digits, `_`). */
  readonly databaseName: string;
  /** The TTL archive's prefix. Default `archive/`. */
  readonly archivePrefix?: string;
  /** Also the user-delete archive, under `<archivePrefix>user-deletes/` (TtlArchive's `all-deletes`). Default false. */
  readonly userDeletes?: boolean;
  /**
   * Where a change log (every insert, modify and delete) is archived: with it, change-log tables.
   * TtlArchive's `every-change` sets it to its own `<archivePrefix>changes/`. Default: none.
   */
  readonly changeArchivePrefix?: string;
  /** The layouts to make tables for. Default `['ndjson']`. */
  readonly formats?: readonly ArchiveQueryFormat[];
}

const readProps = /* @__PURE__ */ defineOptions<ArchiveQueryTablesProps>()('ArchiveQueryTables', {
  bucket: { kind: 'object', methods: ['grantRead'], expected: 'an s3.IBucket', required: true },
  tables: {
    kind: 'custom',
    expected: 'a non-empty array of table names',
    check: (v) => Array.isArray(v) && v.length > 0 && v.every((t) => typeof t === 'string' && t !== ''),
    required: true,
  },
  databaseName: {
    kind: 'custom',
    expected: 'a Glue database name (lowercase letters, digits and _)',
    check: (v) => typeof v === 'string' && /^[a-z0-9_]{1,255}$/.test(v),
    required: true,
  },
  archivePrefix: { ...KEY_PREFIX_OPTION, default: 'archive/' },
  userDeletes: { kind: 'boolean', default: false },
  changeArchivePrefix: KEY_PREFIX_OPTION,
  formats: {
    kind: 'custom',
    expected: "a non-empty array of 'ndjson' and 'parquet'",
    check: (v) =>
      Array.isArray(v) && v.length > 0 && v.every((f) => FORMATS.includes(f as ArchiveQueryFormat)),
    default: ['ndjson'],
  },
});

/** One archive: its tables' base name and its prefix in the bucket. */
interface QueriedArchive {
  readonly id: string;
  readonly name: string;
  readonly prefix: string;
}

/** The Glue database, tables and saved de-duplicating views of an archive bucket (docs/query.md). */
export class ArchiveQueryTables extends Construct {
  readonly database: glue.CfnDatabase;
  /** Every table made, by its Glue name (`ttl_archive`, `ttl_archive_parquet`, …). */
  readonly tables: ReadonlyMap<string, glue.CfnTable>;
  /** The saved `CREATE OR REPLACE VIEW <table>_dedup` queries, by view name: run each once. */
  readonly views: ReadonlyMap<string, athena.CfnNamedQuery>;

  constructor(scope: Construct, id: string, props: ArchiveQueryTablesProps) {
    super(scope, id);
    const o = readProps(props);
    const account = Stack.of(this).account;
    this.database = new glue.CfnDatabase(this, 'Database', {
      catalogId: account,
      databaseInput: { name: o.databaseName, description: "tidewater's archive (docs/query.md)" },
    });
    const archives: QueriedArchive[] = [{ id: 'Ttl', name: 'ttl_archive', prefix: o.archivePrefix }];
    if (o.userDeletes)
      archives.push({
        id: 'UserDelete',
        name: 'user_delete_archive',
        prefix: userDeletePrefix(o.archivePrefix),
      });
    if (o.changeArchivePrefix !== undefined)
      archives.push({ id: 'Change', name: 'change_archive', prefix: o.changeArchivePrefix });
    const tables = new Map<string, glue.CfnTable>();
    const views = new Map<string, athena.CfnNamedQuery>();
    const projection = projectionParameters(o.tables.join(','));
    const columns = (list: readonly QueryColumn[]) => list.map((c) => ({ name: c.name, type: c.type }));
    for (const archive of archives) {
      const base = `s3://${o.bucket.bucketName}/${archive.prefix}`;
      for (const format of o.formats) {
        const ndjson = format === 'ndjson';
        // Parquet objects live under the archive's own Parquet root, so no partition holds both formats.
        const location = ndjson ? base : `${base}${PARQUET_LOCATION_ROOT}`;
        const template = ndjson ? `${base}${PARTITION_LOCATION}` : `${base}${PARQUET_PARTITION_LOCATION}`;
        const parameters = { ...projection, 'storage.location.template': template };
        const name = ndjson ? archive.name : `${archive.name}_parquet`;
        const table = new glue.CfnTable(this, `${archive.id}${ndjson ? 'Ndjson' : 'Parquet'}Table`, {
          catalogId: account,
          // Its Ref is the name: the table waits for the database.
          databaseName: this.database.ref,
          tableInput: {
            name,
            tableType: 'EXTERNAL_TABLE',
            partitionKeys: columns(PARTITION_COLUMNS),
            parameters: ndjson
              ? { classification: 'json', compressionType: 'gzip', ...parameters }
              : { classification: 'parquet', ...parameters },
            storageDescriptor: {
              location,
              columns: columns(ndjson ? NDJSON_COLUMNS : PARQUET_COLUMNS),
              ...(ndjson
                ? {
                    inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
                    outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
                    serdeInfo: {
                      serializationLibrary: 'org.openx.data.jsonserde.JsonSerDe',
                      parameters: ndjsonSerdeParameters(),
                    },
                  }
                : {
                    inputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
                    outputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
                    serdeInfo: {
                      serializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
                    },
                  }),
            },
          },
        });
        tables.set(name, table);
        if (!ndjson) continue;
        // A saved query, not a VIRTUAL_VIEW table: Athena's view encoding is undocumented (docs/query.md).
        const view = new athena.CfnNamedQuery(this, `${archive.id}DedupView`, {
          name: `${o.databaseName} ${archive.name}_dedup view`,
          description: `Creates ${archive.name}_dedup, ${archive.name} with each change once (by event_id)`,
          database: this.database.ref,
          queryString: dedupViewSql(archive.name),
        });
        views.set(`${archive.name}_dedup`, view);
      }
    }
    this.tables = tables;
    this.views = views;
  }
}
