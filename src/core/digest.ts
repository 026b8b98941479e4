import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';

/** Base64 SHA-256: S3's `x-amz-checksum-sha256` format. */
export function sha256Base64(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('base64');
}

/** Hex SHA-256, for ids and key segments derived from content (safe in keys, queues and groups). */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * A pass-through stream that hashes (MD5) and counts the bytes it carries, for a body that must
 * be checked or described (S3's ETag, an export's md5Checksum) without being held.
 */
export function md5Tap(): { stream: Transform; bytes(): number; digest(encoding: 'hex' | 'base64'): string } {
  const hash = createHash('md5');
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  return { stream, bytes: () => bytes, digest: (encoding) => hash.digest(encoding) };
}
