import { ArchiveFormatError } from './errors.js';
import type { ArchiveObjectFormat } from './format.js';

export const MANIFEST_TYPE = 'tidewater.compaction';

/**
 * What one compaction of an hour partition did, written before any object it replaces is deleted:
 * the objects read (with the version read), the objects written (row counts, SHA-256 of each
 * body, as S3 verified them on upload), and the row counts and row-set hash that let anyone check
 * the hour later (`readArchiveRows` over the hour gives `rows.written` rows whose ids hash to
 * `rowSetSha256`). Manifests hold keys and counts, never row contents.
 */
export interface CompactionManifest {
  type: typeof MANIFEST_TYPE;
  version: 1;
  /** The outputs' format (`compactArchive`'s `format`); absent in manifests written before Parquet, which are `ndjson`. */
  format?: ArchiveObjectFormat;
  prefix: string;
  table: string;
  dt: string;
  hour: string;
  createdAt: string;
  inputs: { key: string; etag?: string; versionId?: string; rows: number; bytes: number }[];
  outputs: { key: string; rows: number; sha256: string; first: string; last: string; bytes: number }[];
  /** Inputs that are not also outputs: what the compaction deletes. */
  replaced: string[];
  rows: { read: number; duplicates: number; written: number; unassigned: number };
  rowSetSha256: string;
}

/**
 * `<prefix>/_compaction/table=<t>/dt=<d>/hour=<h>/`: beside the tables, not inside an hour, so
 * readArchive, Athena's partition locations and a tenant's listing never see a manifest.
 */
export function manifestPrefix(prefix: string, table: string, dt: string, hour: string): string {
  return `${prefix === '' ? '' : `${prefix}/`}_compaction/table=${table}/dt=${dt}/hour=${hour}/`;
}

/** Named by creation time (so they list oldest first) and the row-set hash. */
export function manifestKey(manifest: CompactionManifest): string {
  const stamp = manifest.createdAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${manifestPrefix(manifest.prefix, manifest.table, manifest.dt, manifest.hour)}${stamp}-${manifest.rowSetSha256.slice(0, 12)}.json`;
}

export function parseManifest(text: string, key: string): CompactionManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ArchiveFormatError(key, 'compaction manifest is not JSON', undefined, { cause: error });
  }
  const m = value as Partial<CompactionManifest> | null;
  if (
    m === null ||
    typeof m !== 'object' ||
    m.type !== MANIFEST_TYPE ||
    m.version !== 1 ||
    !Array.isArray(m.outputs) ||
    !Array.isArray(m.replaced) ||
    (m.format !== undefined && m.format !== 'ndjson' && m.format !== 'parquet')
  ) {
    throw new ArchiveFormatError(key, `not a ${MANIFEST_TYPE} manifest of version 1`);
  }
  return m as CompactionManifest;
}
