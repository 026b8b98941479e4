import { InvalidAttributeValueError } from './errors.js';

/**
 * Base64 (Lambda shape) or bytes (SDK shape) to a standalone Uint8Array. The decoded Buffer may
 * live in Node's shared allocation pool; copying it keeps other data out of `.buffer`.
 */
export function toBytes(value: unknown): Uint8Array {
  if (typeof value === 'string') {
    const pooled = Buffer.from(value, 'base64');
    const bytes = new Uint8Array(pooled.length);
    bytes.set(pooled);
    return bytes;
  }
  if (value instanceof Uint8Array) return value;
  throw new InvalidAttributeValueError(
    'invalid-binary',
    `B must be a base64 string or a Uint8Array, got ${value === null ? 'null' : typeof value}`,
  );
}

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
