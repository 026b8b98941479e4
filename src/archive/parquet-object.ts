import { gunzipSync, gzipSync } from 'node:zlib';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { sha256Base64 } from '../core/digest.js';
import { ArchiveFormatError } from './errors.js';
import type { ArchiveRow, EncodedObject } from './format.js';
import {
  type ArchiveColumn,
  type ColumnRecord,
  type ColumnType,
  columnsToRow,
  DEFAULT_KEY_ATTRIBUTES,
  PARQUET_ARCHIVE_FORMAT as PARQUET_FORMAT,
  type ParquetSettings,
  ROW_COLUMNS,
  rowsToColumns,
} from './parquet-columns.js';
import type { ObjectEncoder } from './rewritten-object.js';

// An archive object as Apache Parquet: hyparquet-writer writes it, hyparquet reads it back
// (docs/archive.md#why-hyparquet). Loaded only where Parquet is written or read — compaction with
// `format: 'parquet'`, and format.ts's decoder behind a dynamic import — never by the sinks.

/** The key-value metadata entry holding the format and the ParquetSettings the object was written with. */
const SETTINGS_KEY = 'tidewater';

/** Every column's pages gzip-compressed with node:zlib: smaller than the default Snappy, read by every engine. */
const COMPRESSORS = { GZIP: (input: Uint8Array) => new Uint8Array(gzipSync(input)) };
const DECOMPRESSORS = { GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)) };

type SchemaElement = NonNullable<Parameters<typeof parquetWriteBuffer>[0]['schema']>[number];

function schemaElement(name: string, type: ColumnType, required: boolean): SchemaElement {
  const repetition_type = required ? 'REQUIRED' : 'OPTIONAL';
  if (type === 'string') return { name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type };
  if (type === 'boolean') return { name, type: 'BOOLEAN', repetition_type };
  if (type === 'int64') return { name, type: 'INT64', repetition_type };
  if (type === 'timestamp') {
    return {
      name,
      type: 'INT64',
      converted_type: 'TIMESTAMP_MILLIS',
      logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
      repetition_type,
    };
  }
  // 16 bytes hold every 38-digit unscaled value.
  return {
    name,
    type: 'FIXED_LEN_BYTE_ARRAY',
    type_length: 16,
    converted_type: 'DECIMAL',
    precision: 38,
    scale: type.decimalScale,
    logical_type: { type: 'DECIMAL', precision: 38, scale: type.decimalScale },
    repetition_type,
  };
}

/**
 * Encodes rows (in stream order) as one Parquet object: one row group, gzip pages. A pure
 * function of the rows and settings, so the same rows give the same bytes (and key).
 */
export function encodeParquetObject(rows: readonly ArchiveRow[], settings: ParquetSettings): EncodedObject {
  const columns: ArchiveColumn[] = rowsToColumns(rows, settings);
  const buffer = parquetWriteBuffer({
    columnData: columns.map((c) => ({ name: c.name, data: c.values })),
    schema: [
      { name: 'root', num_children: columns.length },
      ...columns.map((c) => schemaElement(c.name, c.type, c.required)),
    ],
    codec: 'GZIP',
    compressors: COMPRESSORS,
    rowGroupSize: Math.max(rows.length, 1),
    kvMetadata: [{ key: SETTINGS_KEY, value: JSON.stringify({ format: PARQUET_FORMAT, ...settings }) }],
    createdBy: PARQUET_FORMAT,
  });
  const body = Buffer.from(buffer);
  return { body, sha256: sha256Base64(body) };
}

/** A Parquet archive object read: its rows and the settings it was written with. */
export interface DecodedParquetObject {
  rows: ArchiveRow[];
  settings: ParquetSettings;
}

/** Decodes one Parquet archive object (`key` names it in errors) to the rows it was written from. */
export async function decodeParquetObject(body: Uint8Array, key: string): Promise<DecodedParquetObject> {
  const file = body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
  let settings: ParquetSettings;
  let records: ColumnRecord[];
  try {
    const metadata = parquetMetadata(file);
    const entry = metadata.key_value_metadata?.find((kv) => kv.key === SETTINGS_KEY)?.value;
    const stored =
      entry === undefined ? undefined : (JSON.parse(entry) as Partial<ParquetSettings> & { format?: string });
    if (stored?.format !== PARQUET_FORMAT) throw new Error(`not a ${PARQUET_FORMAT} object`);
    settings = {
      keyAttributes: stored.keyAttributes ?? DEFAULT_KEY_ATTRIBUTES,
      typedColumns: stored.typedColumns ?? {},
    };
    records = (await parquetReadObjects({
      file,
      metadata,
      columns: [...ROW_COLUMNS],
      compressors: DECOMPRESSORS,
    })) as ColumnRecord[];
  } catch (error) {
    throw new ArchiveFormatError(
      key,
      `not a tidewater Parquet object (${(error as Error).message})`,
      undefined,
      {
        cause: error,
      },
    );
  }
  const rows: ArchiveRow[] = [];
  for (let i = 0; i < records.length; i++) {
    try {
      rows.push(columnsToRow(records[i] as ColumnRecord));
    } catch (error) {
      throw new ArchiveFormatError(key, 'a row whose keys or images are not JSON', i + 1, { cause: error });
    }
  }
  return { rows, settings };
}

/** The encoder compaction and erase write Parquet objects with. */
export function parquetEncoder(settings: ParquetSettings): ObjectEncoder {
  return { format: 'parquet', encode: (rows) => encodeParquetObject(rows, settings) };
}
