// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables and Athena placeholders, not template literals
// infra/query.yml and docs/query.md against the archive's query layout (src/archive/query-layout.ts,
// which the CDK's ArchiveQueryTables and the saved views are made from): the deployed tables, the
// page's DDL and the construct cannot declare different columns, partitions or projection.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
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
} from '../../../src/archive/query-layout.js';
import { ARCHIVE_ROUTES, changeLogPrefix, userDeletePrefix } from '../../../src/handlers/archive-settings.js';
import { cfnColumns, type GlueTableInput } from '../../support/glue-table.js';
import { queryDocs } from '../../support/query-docs.js';

const root = path.resolve(import.meta.dirname, '../../..');

interface Resource {
  Type: string;
  Condition?: string;
  Properties: Record<string, unknown>;
}

const infra = yaml.load(readFileSync(path.join(root, 'infra/query.yml'), 'utf8')) as {
  Conditions: Record<string, unknown>;
  Resources: Record<string, Resource>;
};
const parameters = yaml.load(readFileSync(path.join(root, 'infra/parameters.yml'), 'utf8')) as {
  Parameters: Record<string, { AllowedValues?: string[] }>;
};

const glueTables = Object.entries(infra.Resources)
  .filter(([, r]) => r.Type === 'AWS::Glue::Table')
  .map(([id, r]) => ({ id, condition: r.Condition, input: r.Properties.TableInput as GlueTableInput }));

/** A Fn::Join of infra/query.yml as text, the bucket and prefixes standing for themselves. */
function joined(value: unknown): string {
  const join = value as { 'Fn::Join': [string, unknown[]] };
  return join['Fn::Join'][1]
    .map((part) => {
      if (typeof part === 'string') return part;
      const ref = (part as { Ref: string }).Ref;
      return ref === 'ArchiveBucket' ? '<bucket>' : `<${ref}>`;
    })
    .join('');
}

/** The base location of each table, by name: the archive it reads, where the archive handler writes it. */
const ARCHIVE_PREFIX = '${self:custom.tidewater.archivePrefix}';
const LOCATIONS: Record<string, string> = {
  ttl_archive: `s3://<bucket>/${ARCHIVE_PREFIX}`,
  user_delete_archive: `s3://<bucket>/${userDeletePrefix(ARCHIVE_PREFIX)}`,
  change_archive: `s3://<bucket>/${changeLogPrefix(ARCHIVE_PREFIX)}`,
};

describe('infra/query.yml', () => {
  it('declares the TTL, user-delete and change-log tables in both layouts, each on its own condition', () => {
    expect(glueTables.map((t) => [t.input.Name, t.condition])).toEqual([
      ['ttl_archive', 'ArchiveQueryNdjson'],
      ['user_delete_archive', 'QueryNdjsonUserDeletes'],
      ['change_archive', 'QueryNdjsonChanges'],
      ['ttl_archive_parquet', 'ArchiveQueryParquet'],
      ['user_delete_archive_parquet', 'QueryParquetUserDeletes'],
      ['change_archive_parquet', 'QueryParquetChanges'],
    ]);
  });

  it('makes the user-delete tables with all-deletes and the change-log tables with every-change, routes the stack parameter allows', () => {
    expect(infra.Conditions.ArchivesUserDeletes).toEqual({
      'Fn::Equals': [{ Ref: 'ArchiveRoutes' }, 'all-deletes'],
    });
    expect(infra.Conditions.ArchivesChanges).toEqual({
      'Fn::Equals': [{ Ref: 'ArchiveRoutes' }, 'every-change'],
    });
    // Every value the archive handler accepts is one the stack parameter allows, and no other.
    expect(parameters.Parameters.ArchiveRoutes?.AllowedValues).toEqual([...ARCHIVE_ROUTES]);
  });

  it.each(glueTables.map((t) => [t.input.Name, t] as const))(
    '%s: the layout columns, partitions, projection and a location template ending at the hour',
    (name, { input }) => {
      const parquet = name.endsWith('_parquet');
      const base = LOCATIONS[name.replace(/_parquet$/, '')] as string;
      expect(input.StorageDescriptor.Columns).toEqual(cfnColumns(parquet ? PARQUET_COLUMNS : NDJSON_COLUMNS));
      expect(input.PartitionKeys).toEqual(cfnColumns(PARTITION_COLUMNS));
      const { 'storage.location.template': template, ...parameters } = input.Parameters;
      expect(parameters).toEqual({
        ...(parquet ? { classification: 'parquet' } : { classification: 'json', compressionType: 'gzip' }),
        ...projectionParameters('${self:custom.tidewater.tableName}'),
      });
      expect(joined(input.StorageDescriptor.Location)).toBe(
        parquet ? `${base}${PARQUET_LOCATION_ROOT}` : base,
      );
      expect(joined(template)).toBe(`${base}${parquet ? PARQUET_PARTITION_LOCATION : PARTITION_LOCATION}`);
      if (parquet)
        expect(input.StorageDescriptor.SerdeInfo).toEqual({
          SerializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
        });
      else
        expect(input.StorageDescriptor.SerdeInfo).toEqual({
          SerializationLibrary: 'org.openx.data.jsonserde.JsonSerDe',
          Parameters: ndjsonSerdeParameters(),
        });
    },
  );

  it("saves each NDJSON table's view, generated from the layout's statement", () => {
    const views = Object.values(infra.Resources).filter((r) => r.Type === 'AWS::Athena::NamedQuery');
    expect(views.map((v) => [v.Condition, v.Properties.QueryString])).toEqual([
      ['ArchiveQueryNdjson', '${file(./infra/query-views.cjs):ttl_archive}'],
      ['QueryNdjsonUserDeletes', '${file(./infra/query-views.cjs):user_delete_archive}'],
      ['QueryNdjsonChanges', '${file(./infra/query-views.cjs):change_archive}'],
    ]);
  });
});

/** `name type, name type, …` of a DDL's parenthesised list. */
function ddlColumns(list: string): { Name: string; Type: string }[] {
  return list
    .split(',')
    .map((c) => c.trim().split(/\s+/))
    .map(([name, type]) => ({ Name: (name as string).replaceAll('`', ''), Type: type as string }));
}

/** `'key' = 'value', …` of a DDL's properties. */
function ddlProperties(list: string): Record<string, string> {
  return Object.fromEntries([...list.matchAll(/'([^']+)'\s*=\s*'([^']*)'/g)].map((m) => [m[1], m[2]]));
}

describe('docs/query.md', () => {
  const docs = queryDocs();

  it.each([
    ['ttl_archive', NDJSON_COLUMNS],
    ['ttl_archive_parquet', PARQUET_COLUMNS],
  ] as const)('%s: the DDL declares what infra/query.yml deploys', (name, columns) => {
    const ddl = docs.ddl.get(name) as string;
    const m =
      /^CREATE EXTERNAL TABLE \w+ \(([\s\S]*?)\)\nPARTITIONED BY \(([^)]*)\)\n([\s\S]*?)LOCATION '([^']+)'\nTBLPROPERTIES \(([\s\S]*)\);$/.exec(
        ddl,
      );
    expect(m, name).not.toBeNull();
    const [, body, partitions, format, location, properties] = m as unknown as string[];
    expect(ddlColumns(body as string)).toEqual(cfnColumns(columns));
    expect(ddlColumns(partitions as string)).toEqual(cfnColumns(PARTITION_COLUMNS));
    const parquet = name.endsWith('_parquet');
    if (parquet) expect((format as string).trim()).toBe('STORED AS PARQUET');
    else {
      expect(format).toContain("ROW FORMAT SERDE 'org.openx.data.jsonserde.JsonSerDe'");
      expect(ddlProperties(format as string)).toEqual(ndjsonSerdeParameters());
    }
    expect(location).toBe(
      parquet ? `s3://my-archive/archive/${PARQUET_LOCATION_ROOT}` : 's3://my-archive/archive/',
    );
    expect(ddlProperties(properties as string)).toEqual({
      ...(parquet ? { classification: 'parquet' } : { classification: 'json', compressionType: 'gzip' }),
      ...projectionParameters('orders'),
      'storage.location.template': `s3://my-archive/archive/${parquet ? PARQUET_PARTITION_LOCATION : PARTITION_LOCATION}`,
    });
  });

  it('shows the view the stack saves', () => {
    expect(docs.view).toBe(dedupViewSql('ttl_archive'));
  });
});
