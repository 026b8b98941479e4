import { sha256Hex } from '../core/digest.js';
import {
  type ArchiveObjectFormat,
  type ArchivePartition,
  type ArchiveRow,
  type EncodedObject,
  encodeObject,
  objectKey,
  parquetObjectKey,
  TAG_LENGTH,
} from './format.js';

/** An object compaction or erase writes in place of others. */
export interface RewrittenObject {
  key: string;
  body: Buffer;
  /** Base64 SHA-256 of the body, as the sinks store it. */
  sha256: string;
  first: string;
  last: string;
  rows: number;
}

/**
 * How rewritten objects are encoded: NDJSON+gzip from the rows' lines, or Parquet from the rows
 * (parquet-object.ts's `parquetEncoder`, loaded only by the code that asks for Parquet).
 */
export interface ObjectEncoder {
  format: ArchiveObjectFormat;
  encode(rows: readonly ArchiveRow[], lines: readonly string[]): EncodedObject;
}

/** The sinks' encoding: the NDJSON lines, gzipped. */
export const NDJSON_ENCODER: ObjectEncoder = {
  format: 'ndjson',
  encode: (_rows, lines) => encodeObject(lines),
};

/**
 * Encodes rows (in stream order; `lines[i]` is `rows[i]` as its NDJSON line, ending in `\n`) as
 * an archive object whose key's tag is a hash of its body: the same rows always get the same key,
 * and a key already stored holds exactly these bytes — so a run repeated after a crash rewrites
 * nothing, and a key that names other content never collides with it.
 */
export function rewrittenObject(
  prefix: string,
  partition: ArchivePartition,
  content: { rows: readonly ArchiveRow[]; lines: readonly string[] },
  sequence: { first: string; last: string },
  encoder: ObjectEncoder = NDJSON_ENCODER,
): RewrittenObject {
  const { body, sha256 } = encoder.encode(content.rows, content.lines);
  const tag = sha256Hex(body).slice(0, TAG_LENGTH);
  const key =
    encoder.format === 'parquet'
      ? parquetObjectKey(prefix, partition, sequence.first, sequence.last, tag)
      : objectKey(prefix, partition, sequence.first, sequence.last, tag);
  return { key, body, sha256, first: sequence.first, last: sequence.last, rows: content.rows.length };
}
