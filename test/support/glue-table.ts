import type { QueryColumn } from '../../src/archive/query-layout.js';

/** An AWS::Glue::Table's TableInput as a template holds it (infra/query.yml, a synthesized stack). */
export interface GlueTableInput {
  Name: string;
  PartitionKeys: { Name: string; Type: string }[];
  Parameters: Record<string, unknown>;
  StorageDescriptor: {
    Location: unknown;
    Columns: { Name: string; Type: string }[];
    SerdeInfo: { SerializationLibrary: string; Parameters?: Record<string, string> };
  };
}

/** The layout's columns as a Glue table declares them. */
export const cfnColumns = (columns: readonly QueryColumn[]) =>
  columns.map((c) => ({ Name: c.name, Type: c.type }));
