import { sha256Hex } from '../core/digest.js';
import { type ArchivePartition, encodeObject, objectKey, TAG_LENGTH } from './format.js';

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
 * Encodes NDJSON lines (each ending in `\n`, in stream order) as an archive object whose key's
 * tag is a hash of its body: the same rows always get the same key, and a key already stored
 * holds exactly these bytes — so a run repeated after a crash rewrites nothing, and a key that
 * names other content never collides with it.
 */
export function rewrittenObject(
  prefix: string,
  partition: ArchivePartition,
  lines: readonly string[],
  sequence: { first: string; last: string },
): RewrittenObject {
  const { body, sha256 } = encodeObject(lines);
  const key = objectKey(
    prefix,
    partition,
    sequence.first,
    sequence.last,
    sha256Hex(body).slice(0, TAG_LENGTH),
  );
  return { key, body, sha256, first: sequence.first, last: sequence.last, rows: lines.length };
}
