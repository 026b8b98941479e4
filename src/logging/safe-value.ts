import { NumberValue } from '../records/number-value.js';
import { errorShape } from './error-shape.js';

/** What to hide and how deep to go; built once per logger. */
export interface SafeValueSettings {
  /** Property names whose values are replaced by `[Redacted]`, at any depth. */
  readonly redact: ReadonlySet<string>;
  readonly maxDepth: number;
}

/** What a redacted value is logged as, in place of an item value. */
export const REDACTED = '[Redacted]';
const MAX_BINARY_BYTES = 1024;

/** Item images under the names both wire shapes and the record model use. */
export const IMAGE_KEYS: readonly string[] = ['NewImage', 'OldImage', 'newImage', 'oldImage'];
export const KEY_KEYS: readonly string[] = ['Keys', 'keys'];

/** createLogger's defaults: images redacted, 12 levels deep. */
export const DEFAULT_SETTINGS: SafeValueSettings = Object.freeze({
  redact: new Set(IMAGE_KEYS),
  maxDepth: 12,
});

function binary(bytes: Uint8Array): string {
  if (bytes.byteLength > MAX_BINARY_BYTES) return `[Binary ${bytes.byteLength} bytes]`;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * A JSON-safe copy of a log payload: bigint and exact numbers become their digits as strings
 * (a JSON number would be rounded by most readers), Sets become arrays, binaries base64, errors
 * pino's error shape, records their toJSON form; redacted names are replaced wherever they
 * appear, so an image nested in a dead-letter entry or a record's raw form is hidden too.
 */
export function toLogSafe(value: unknown, settings: SafeValueSettings = DEFAULT_SETTINGS): unknown {
  return walk(value, settings, 0, new WeakSet<object>());
}

function walk(value: unknown, s: SafeValueSettings, depth: number, seen: WeakSet<object>): unknown {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'function':
    case 'symbol':
      return undefined;
    case 'object':
      break;
    default:
      return value;
  }
  if (value === null) return null;
  if (value instanceof NumberValue) return value.value;
  if (value instanceof Uint8Array) return binary(value);
  if (value instanceof Date) return value;
  if (seen.has(value)) return '[Circular]';
  if (depth >= s.maxDepth) return '[Object]';
  seen.add(value);
  try {
    if (value instanceof Error) return walk(errorShape(value), s, depth, seen);
    if (Array.isArray(value)) return value.map((v) => walk(v, s, depth + 1, seen));
    if (value instanceof Set) return Array.from(value, (v) => walk(v, s, depth + 1, seen));
    if (value instanceof Map) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of value) put(out, String(k), v, s, depth, seen);
      return out;
    }
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return walk(toJSON.call(value), s, depth, seen);
    const out: Record<string, unknown> = {};
    for (const key in value) put(out, key, (value as Record<string, unknown>)[key], s, depth, seen);
    return out;
  } finally {
    seen.delete(value);
  }
}

function put(
  out: Record<string, unknown>,
  key: string,
  value: unknown,
  s: SafeValueSettings,
  depth: number,
  seen: WeakSet<object>,
): void {
  const safe = s.redact.has(key) && value !== undefined ? REDACTED : walk(value, s, depth + 1, seen);
  if (key === '__proto__')
    Object.defineProperty(out, key, { value: safe, enumerable: true, writable: true, configurable: true });
  else out[key] = safe;
}
