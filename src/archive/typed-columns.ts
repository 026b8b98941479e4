import { InvalidOptionsError } from '../core/errors.js';

/** The type of a typed column: what an item attribute's DynamoDB type (`S`, `BOOL`, `N`) becomes. */
export type TypedColumnKind = 'string' | 'boolean' | 'number';

/**
 * The item attributes a Parquet archive object gets typed columns for: `{ status: 'string',
 * paid: 'boolean', amount: 'number' }` adds `item_status`, `item_paid` and `item_amount`, read from
 * each row's new image (else its old image).
 */
export type TypedColumns = Readonly<Record<string, TypedColumnKind>>;

/**
 * What `typedColumnsFromSchema` reads: a Standard Schema whose `~standard` also implements
 * Standard JSON Schema (`jsonSchema.input(...)`, as zod 4 does). Structural, so the archive
 * needs no import from the pipeline's schema types.
 */
export interface JsonSchemaCarrier {
  readonly '~standard': {
    readonly vendor: string;
    readonly jsonSchema?: { readonly input?: (options: { target: string }) => unknown } | undefined;
  };
}

/** Column names Athena (case-insensitive, lowercasing) and DuckDB read as they are. */
const COLUMN_NAME = /^[A-Za-z0-9_]+$/;
const KINDS: readonly TypedColumnKind[] = ['string', 'boolean', 'number'];

/** Checks a typed-column map (`where` names the option in errors): names a query engine reads as they are, one per name ignoring case. */
export function checkTypedColumns(where: string, columns: unknown): TypedColumns {
  if (columns === null || typeof columns !== 'object' || Array.isArray(columns)) {
    throw new InvalidOptionsError(`${where}: option 'typedColumns' must be an object, got ${typeof columns}`);
  }
  const seen = new Set<string>();
  for (const [name, kind] of Object.entries(columns)) {
    if (!COLUMN_NAME.test(name) || seen.has(name.toLowerCase())) {
      throw new InvalidOptionsError(
        `${where}: option 'typedColumns' names must be letters, digits and '_', one per name ignoring case, got '${name}'`,
      );
    }
    if (!KINDS.includes(kind as TypedColumnKind)) {
      throw new InvalidOptionsError(
        `${where}: option 'typedColumns.${name}' must be 'string', 'boolean' or 'number', got ${JSON.stringify(kind)}`,
      );
    }
    seen.add(name.toLowerCase());
  }
  return columns as TypedColumns;
}

/**
 * The typed columns of an item schema's top-level properties of type string, boolean, number or
 * integer (others — objects, lists, sets, binary — stay in the image columns only). A Standard
 * Schema says nothing of its shape; only one that also implements Standard JSON Schema (zod 4
 * does) can be read, and any other is refused with InvalidOptionsError: give `typedColumns`.
 */
export function typedColumnsFromSchema(schema: JsonSchemaCarrier): TypedColumns {
  const standard = schema?.['~standard'];
  const input = standard?.jsonSchema?.input;
  if (typeof input !== 'function') {
    throw new InvalidOptionsError(
      `typedColumnsFromSchema: a ${standard?.vendor ?? 'non-standard'} schema does not describe its properties (no Standard JSON Schema): give 'typedColumns' instead`,
    );
  }
  const json = input({ target: 'draft-2020-12' }) as { properties?: Record<string, { type?: unknown }> };
  const out: Record<string, TypedColumnKind> = {};
  for (const [name, property] of Object.entries(json?.properties ?? {})) {
    if (!COLUMN_NAME.test(name)) continue;
    const type = property?.type;
    if (type === 'string') out[name] = 'string';
    else if (type === 'boolean') out[name] = 'boolean';
    else if (type === 'number' || type === 'integer') out[name] = 'number';
  }
  return checkTypedColumns('typedColumnsFromSchema', out);
}
