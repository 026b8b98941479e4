import { InvalidAttributeValueError } from './errors.js';

/**
 * Base64 alphabet (standard and URL-safe) to 6-bit values; 255 marks anything else. Also how
 * limits.ts compares set members as text (one table for both).
 */
export const DECODE = (() => {
  const table = new Uint8Array(256).fill(255);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < 64; i++) table[alphabet.charCodeAt(i)] = i;
  table[45] = 62; // '-'
  table[95] = 63; // '_'
  return table;
})();

/**
 * The length of the base64 text without its `=` padding, or -1 when the padding or length can
 * not be base64. The one length rule decodeBase64, isBase64 and unmarshall's deferred binaries
 * share; decodedLength(it) bytes follow from it.
 */
export function unpaddedBase64Length(text: string): number {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 61) end--;
  const padding = text.length - end;
  if (padding > 2 || (padding > 0 && text.length % 4 !== 0) || end % 4 === 1) return -1;
  return end;
}

/** Whether decodeBase64 accepts the text; allocates nothing (structural validation). */
export function isBase64(text: string): boolean {
  const end = unpaddedBase64Length(text);
  if (end < 0) return false;
  let i = 0;
  const whole = end - (end % 4);
  // Four at a time, as the decoder does: valid entries are < 64, so one OR shows any 255.
  for (; i < whole; i += 4) {
    const c0 = text.charCodeAt(i);
    const c1 = text.charCodeAt(i + 1);
    const c2 = text.charCodeAt(i + 2);
    const c3 = text.charCodeAt(i + 3);
    if ((c0 | c1 | c2 | c3) > 255) return false;
    if ((DECODE[c0]! | DECODE[c1]! | DECODE[c2]! | DECODE[c3]!) === 255) return false;
  }
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c > 255 || DECODE[c] === 255) return false;
  }
  return true;
}

/** Whether toBytes accepts the value. */
export function isBinary(value: unknown): boolean {
  return typeof value === 'string' ? isBase64(value) : value instanceof Uint8Array;
}

export function invalidBinary(detail: string): InvalidAttributeValueError {
  return new InvalidAttributeValueError('invalid-binary', detail);
}

/** Bytes that `end` unpadded base64 characters decode to. */
export function decodedLength(end: number): number {
  return (end * 3) >> 2;
}

/**
 * Texts from this unpadded length on are decoded by Node's native decoder; shorter ones by the
 * table loop, where the native call and its Buffer view cost more than the loop (measured: 0.84×
 * for binaries of 16 to 64 bytes, 2.3× faster for 80 to 600). 88 characters are 66 bytes: the
 * binaries unmarshall places in per-image memory are all native.
 */
const NATIVE_MIN_CHARS = 88;

/**
 * Decodes `text`, whose unpadded length is `end`, into `memory` from `offset` with Node's native
 * decoder, writing decodedLength(end) bytes at most (never past them into a neighbour's bytes);
 * false when the text is not base64. Buffer's decoder is lenient: it skips a character outside
 * both alphabets (a space, a `$`, a code unit above 255) and stops at an `=` inside the text. Either
 * leaves fewer than `end` characters to decode, and with a length unpaddedBase64Length accepts
 * (never 1 more than a multiple of 4) fewer characters always make fewer bytes: the count written
 * is the check, so what the decoder skips is refused as the table decoder refuses it.
 */
export function decodeBase64Into(text: string, end: number, memory: Buffer, offset: number): boolean {
  const size = decodedLength(end);
  return memory.write(text, offset, size, 'base64') === size;
}

/**
 * The table decoder, for short texts: the first `end` characters of `text` into `out`; false, with
 * `out` partly written, when a character is not base64. The caller sized `out`.
 */
function decodeShortBase64Into(text: string, end: number, out: Uint8Array): boolean {
  let o = 0;
  let i = 0;
  const whole = end - (end % 4);
  for (; i < whole; i += 4) {
    const c0 = text.charCodeAt(i);
    const c1 = text.charCodeAt(i + 1);
    const c2 = text.charCodeAt(i + 2);
    const c3 = text.charCodeAt(i + 3);
    // Any code unit above 255 sets a bit above the table's range; test once for all four.
    if ((c0 | c1 | c2 | c3) > 255) return false;
    const a = DECODE[c0]!;
    const b = DECODE[c1]!;
    const c = DECODE[c2]!;
    const d = DECODE[c3]!;
    if ((a | b | c | d) === 255) return false;
    out[o++] = (a << 2) | (b >> 4);
    out[o++] = ((b & 15) << 4) | (c >> 2);
    out[o++] = ((c & 3) << 6) | d;
  }
  const rest = end - i;
  if (rest >= 2) {
    const c0 = text.charCodeAt(i);
    const c1 = text.charCodeAt(i + 1);
    const c2 = rest === 3 ? text.charCodeAt(i + 2) : 65;
    if ((c0 | c1 | c2) > 255) return false;
    const a = DECODE[c0]!;
    const b = DECODE[c1]!;
    const c = DECODE[c2]!;
    if ((a | b | c) === 255) return false;
    out[o++] = (a << 2) | (b >> 4);
    if (rest === 3) out[o] = ((b & 15) << 4) | (c >> 2);
  }
  return true;
}

/**
 * Decodes into memory of its own, exactly sized: a Uint8Array, not a Buffer (whose `.buffer` may
 * be Node's shared pool, leaving unrelated memory reachable). Rejects non-base64 text.
 */
function decodeBase64(text: string): Uint8Array {
  const end = unpaddedBase64Length(text);
  if (end < 0) throw invalidBinary('B is not valid base64');
  const size = decodedLength(end);
  if (end < NATIVE_MIN_CHARS) {
    // Not through an ArrayBuffer: V8 keeps a small typed array's bytes on its heap until asked for `.buffer`.
    const out = new Uint8Array(size);
    if (!decodeShortBase64Into(text, end, out)) throw invalidBinary('B is not valid base64');
    return out;
  }
  const memory = new ArrayBuffer(size);
  if (!decodeBase64Into(text, end, Buffer.from(memory), 0)) throw invalidBinary('B is not valid base64');
  return new Uint8Array(memory);
}

/** Base64 (Lambda shape) or bytes (SDK shape) to a Uint8Array. */
export function toBytes(value: unknown): Uint8Array {
  if (typeof value === 'string') return decodeBase64(value);
  if (value instanceof Uint8Array) return value;
  throw invalidBinary(
    `B must be a base64 string or a Uint8Array, got ${value === null ? 'null' : typeof value}`,
  );
}

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
