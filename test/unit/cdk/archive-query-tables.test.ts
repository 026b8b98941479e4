// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Athena's projection placeholders, not template literals
import { Template } from 'aws-cdk-lib/assertions';
import type * as glue from 'aws-cdk-lib/aws-glue';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { describe, expect, it } from 'vitest';
import {
  dedupViewSql,
  NDJSON_COLUMNS,
  ndjsonSerdeParameters,
  PARQUET_COLUMNS,
  PARTITION_COLUMNS,
  projectionParameters,
} from '../../../src/archive/query-layout.js';
import { ArchiveQueryTables, type ArchiveQueryTablesProps, TtlArchive } from '../../../src/cdk.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { archivePrefixes } from '../../../src/handlers/archive-settings.js';
import { cfnColumns, type GlueTableInput } from '../../support/glue-table.js';
import { inlineCode, newStack, streamTable } from './stack.js';

interface GlueTable {
  Properties: { DatabaseName: unknown; TableInput: GlueTableInput };
}

function synth(props: Partial<ArchiveQueryTablesProps> = {}) {
  const stack = newStack();
  const bucket = new s3.Bucket(stack, 'Archive');
  new ArchiveQueryTables(stack, 'Query', {
    bucket,
    tables: ['orders'],
    databaseName: 'orders_archive',
    ...props,
  });
  const template = Template.fromStack(stack);
  const tables = new Map(
    Object.values(template.findResources('AWS::Glue::Table') as Record<string, GlueTable>).map((t) => [
      t.Properties.TableInput.Name,
      t,
    ]),
  );
  return { template, tables };
}

/** A location as CloudFormation joins it: the bucket's Ref in place. */
const joined = (value: unknown) =>
  JSON.stringify(value)
    .replace(/\{"Ref":"Archive[0-9A-F]+"\}/g, '"<bucket>"')
    .replace(/^\{"Fn::Join":\["",\[(.*)\]\]\}$/, '$1')
    .split(/","|",|,"/)
    .join('')
    .replace(/^"|"$/g, '');

describe('ArchiveQueryTables', () => {
  it('makes the TTL archive NDJSON table and its saved view by default, with the layout columns and projection', () => {
    const { template, tables } = synth();
    template.resourceCountIs('AWS::Glue::Database', 1);
    expect([...tables.keys()]).toEqual(['ttl_archive']);
    const input = (tables.get('ttl_archive') as GlueTable).Properties.TableInput;
    expect(input.StorageDescriptor.Columns).toEqual(cfnColumns(NDJSON_COLUMNS));
    expect(input.PartitionKeys).toEqual(cfnColumns(PARTITION_COLUMNS));
    expect(input.StorageDescriptor.SerdeInfo).toEqual({
      SerializationLibrary: 'org.openx.data.jsonserde.JsonSerDe',
      Parameters: ndjsonSerdeParameters(),
    });
    const { 'storage.location.template': location, ...parameters } = input.Parameters;
    expect(parameters).toEqual({
      classification: 'json',
      compressionType: 'gzip',
      ...projectionParameters('orders'),
    });
    expect(joined(location)).toBe('s3://<bucket>/archive/table=${table}/dt=${dt}/hour=${hour}/');
    expect(joined(input.StorageDescriptor.Location)).toBe('s3://<bucket>/archive/');
    const views = Object.values(template.findResources('AWS::Athena::NamedQuery'));
    expect(views.map((v) => v.Properties.QueryString)).toEqual([dedupViewSql('ttl_archive')]);
  });

  it('makes every archive in every format asked for, each with its own location', () => {
    const { template, tables } = synth({
      userDeletes: true,
      changeArchivePrefix: 'changes/',
      formats: ['ndjson', 'parquet'],
      archivePrefix: 'cold/',
    });
    expect([...tables.keys()].sort()).toEqual(
      [
        'change_archive',
        'change_archive_parquet',
        'ttl_archive',
        'ttl_archive_parquet',
        'user_delete_archive',
        'user_delete_archive_parquet',
      ].sort(),
    );
    const location = (name: string) =>
      joined((tables.get(name) as GlueTable).Properties.TableInput.StorageDescriptor.Location);
    expect(location('ttl_archive')).toBe('s3://<bucket>/cold/');
    expect(location('user_delete_archive_parquet')).toBe('s3://<bucket>/cold/user-deletes/parquet/');
    expect(
      joined(
        (tables.get('ttl_archive_parquet') as GlueTable).Properties.TableInput.Parameters[
          'storage.location.template'
        ],
      ),
    ).toBe('s3://<bucket>/cold/parquet/table=${table}/dt=${dt}/hour=${hour}/');
    expect(location('change_archive')).toBe('s3://<bucket>/changes/');
    const parquet = (tables.get('ttl_archive_parquet') as GlueTable).Properties.TableInput;
    expect(parquet.StorageDescriptor.Columns).toEqual(cfnColumns(PARQUET_COLUMNS));
    expect(parquet.StorageDescriptor.SerdeInfo.SerializationLibrary).toBe(
      'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
    );
    expect(parquet.Parameters.classification).toBe('parquet');
    template.resourceCountIs('AWS::Athena::NamedQuery', 3);
  });

  it('refuses a database name Athena cannot use, an unknown format and a prefix not ending in /', () => {
    for (const props of [
      { databaseName: 'Orders-Archive' },
      { formats: ['orc'] as never },
      { formats: [] },
      { archivePrefix: 'archive' },
      { changeArchivePrefix: '' },
      { tables: [] },
    ])
      expect(() => synth(props), JSON.stringify(props)).toThrow(InvalidOptionsError);
  });

  it("is TtlArchive's queryTables: over its bucket, table and prefix, user deletes with all-deletes", () => {
    const stack = newStack();
    const archive = new TtlArchive(stack, 'Archive', {
      table: streamTable(stack),
      function: { code: inlineCode() },
      routes: 'all-deletes',
      queryTables: { databaseName: 'orders_archive' },
    });
    expect([...(archive.queryTables?.tables.keys() ?? [])]).toEqual(['ttl_archive', 'user_delete_archive']);
    const template = Template.fromStack(stack);
    const table = Object.values(template.findResources('AWS::Glue::Table'))[0] as GlueTable;
    // The table's name, which the keys' table= segment holds.
    expect(table.Properties.TableInput.Parameters['projection.table.values']).toEqual({
      Ref: expect.stringMatching(/^Table/),
    });
  });

  it.each([
    ['ttl-deletes', ['ttl_archive', 'ttl_archive_parquet']],
    [
      'all-deletes',
      ['ttl_archive', 'ttl_archive_parquet', 'user_delete_archive', 'user_delete_archive_parquet'],
    ],
    ['every-change', ['ttl_archive', 'ttl_archive_parquet', 'change_archive', 'change_archive_parquet']],
  ] as const)(
    'with %s, tables over each archive the routes write, where the handler writes it',
    (routes, names) => {
      const stack = newStack();
      const archive = new TtlArchive(stack, 'Archive', {
        table: streamTable(stack),
        function: { code: inlineCode() },
        routes,
        archivePrefix: 'cold/',
        queryTables: { databaseName: 'orders_archive', formats: ['ndjson', 'parquet'] },
      });
      const tables = archive.queryTables?.tables ?? new Map();
      expect([...tables.keys()]).toEqual(names);
      // The archive handler's prefixes for these routes (the compaction handler's too), TTL archive first.
      const prefixes = archivePrefixes(routes, 'cold/');
      const resolve = (value: unknown) => stack.resolve(value) as { 'Fn::Join': [string, unknown[]] };
      for (const [name, table] of tables) {
        const location = resolve((table.tableInput as glue.CfnTable.TableInputProperty).storageDescriptor);
        const prefix = prefixes[name.startsWith('ttl_') ? 0 : 1];
        expect(location, name).toMatchObject({
          // Parquet tables read the archive's Parquet root, beside (not inside) its NDJSON partitions.
          location: {
            'Fn::Join': [
              '',
              ['s3://', expect.anything(), `/${prefix}${name.endsWith('_parquet') ? 'parquet/' : ''}`],
            ],
          },
        });
      }
    },
  );
});
