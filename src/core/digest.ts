import { createHash } from 'node:crypto';

/** Base64 SHA-256: S3's `x-amz-checksum-sha256` format. */
export function sha256Base64(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('base64');
}

/** Hex SHA-256, for ids and key segments derived from content (safe in keys, queues and groups). */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}
