import { type ArchiveRow, decodeObject, objectFormat } from './format.js';
import type { ParquetSettings } from './parquet-columns.js';

// Apart from format.ts, which the sinks import: a module holding a dynamic import() makes esbuild
// wrap every module the imported one reaches in lazy initialisers, and the archive handler's
// bundle would grow by them even though it never decodes an object.

/**
 * Decodes one archive object of either format to its rows, dispatching on the key's file name:
 * the one place every reader (readArchive, readArchiveRows, restoreItems, compaction, erase)
 * decodes an object. The Parquet reader is imported only when a Parquet object is met, so a
 * reader of NDJSON archives never loads it.
 */
export async function decodeArchiveBody(body: Uint8Array, key: string): Promise<ArchiveRow[]> {
  return (await decodeArchiveObjectOf(body, key)).rows;
}

/** decodeArchiveBody, with the Parquet object's settings (what erase rewrites it with). */
export async function decodeArchiveObjectOf(
  body: Uint8Array,
  key: string,
): Promise<{ rows: ArchiveRow[]; parquet?: ParquetSettings }> {
  if (objectFormat(key) === 'ndjson') return { rows: decodeObject(body, key) };
  const { decodeParquetObject } = await import('./parquet-object.js');
  const { rows, settings } = await decodeParquetObject(body, key);
  return { rows, parquet: settings };
}
