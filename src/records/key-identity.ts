import type { RecordIdentity } from '../core/errors.js';
import { toBase64, toBytes } from './binary.js';
import {
  InvalidAttributeValueError,
  MalformedRecordError,
  UnsupportedValueError,
  type ValuePathError,
} from './errors.js';
import { canonicalNumberText } from './number-canonical.js';
import { NumberValue } from './number-value.js';

/**
 * Which item a key names, as one string: equal for two keys exactly when DynamoDB would take them
 * for the same item. Every place that decides "same item" (the version guard and its stores, the
 * idempotency key, Kinesis ordering, tenant erase, restoreItems) compares these, never key text:
 * DynamoDB Local's MODIFY record carries a number key as the request wrote it (`1.50`) while an
 * INSERT, a REMOVE, a Scan and an export carry the stored form (`1.5`).
 *
 * Per attribute, in code point order of the names: `<name length>:<name><type><value length>:<value>`,
 * where the type is `S`, `N` or `B` and the value is the string as it is, the number's canonical
 * text (canonicalNumberText) or the bytes as standard padded base64. The lengths make the text
 * parse back one way only, so two different keys never share one. Lengths count UTF-16 units.
 */
export type KeyIdentity = string;

/** A key attribute's name order: by code points, as DynamoDB orders strings (not by UTF-16 units). */
function byCodePoint(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

function part(name: string, type: string, value: string): string {
  return `${name.length}:${name}${type}${value.length}:${value}`;
}

function atPath<E extends ValuePathError>(error: E, name: string): E {
  error.segments.unshift(name);
  return error.withPath();
}

/** One attribute in DynamoDB JSON (Lambda shape, or the SDK's with bytes). */
function attributePart(name: string, value: unknown): string {
  if (value === null || typeof value !== 'object') {
    throw atPath(
      new InvalidAttributeValueError('wrong-shape', 'a key attribute must be an AttributeValue'),
      name,
    );
  }
  let types = 0;
  for (const _ in value) types++;
  const av = value as { S?: unknown; N?: unknown; B?: unknown };
  try {
    if (types === 1) {
      if (typeof av.S === 'string') return part(name, 'S', nonEmpty(av.S));
      if (typeof av.N === 'string') return part(name, 'N', canonicalNumberText(av.N));
      if (av.B !== undefined) return part(name, 'B', toBase64(nonEmpty(toBytes(av.B))));
    }
  } catch (error) {
    if (error instanceof InvalidAttributeValueError) throw atPath(error, name);
    throw error;
  }
  throw atPath(
    new InvalidAttributeValueError(
      types === 1 ? 'wrong-shape' : types === 0 ? 'no-type' : 'multiple-types',
      'a key attribute must be exactly one of S, N and B',
    ),
    name,
  );
}

/** One unmarshalled key value: a string, a number (number, bigint, NumberValue) or bytes. */
function valuePart(name: string, value: unknown): string {
  try {
    if (typeof value === 'string') return part(name, 'S', nonEmpty(value));
    if (typeof value === 'bigint') return part(name, 'N', canonicalNumberText(String(value)));
    if (typeof value === 'number' && Number.isFinite(value))
      return part(name, 'N', canonicalNumberText(String(value)));
    if (value instanceof NumberValue) return part(name, 'N', canonicalNumberText(value.value));
    if (value instanceof Uint8Array) return part(name, 'B', toBase64(nonEmpty(value)));
  } catch (error) {
    if (error instanceof InvalidAttributeValueError) throw atPath(error, name);
    throw error;
  }
  throw atPath(new UnsupportedValueError('a key value must be a string, a number or bytes'), name);
}

/** DynamoDB refuses a key attribute that is an empty string or empty binary. */
function nonEmpty<T extends string | Uint8Array>(value: T): T {
  if (value.length === 0)
    throw new InvalidAttributeValueError('wrong-shape', 'a key attribute cannot be empty');
  return value;
}

function identityOf(keys: unknown, partOf: (name: string, value: unknown) => string): KeyIdentity {
  if (keys === null || typeof keys !== 'object' || Array.isArray(keys)) {
    throw new InvalidAttributeValueError('wrong-shape', 'a key must be a map of attributes');
  }
  const map = keys as Record<string, unknown>;
  const names = Object.keys(map);
  // A table's key is its partition key, or that and a sort key: anything else names no item.
  if (names.length === 0 || names.length > 2) {
    throw new InvalidAttributeValueError(
      'wrong-shape',
      `a key has one or two attributes (a partition key and an optional sort key), not ${names.length}`,
    );
  }
  // A table key has one or two attributes: the common case sorts nothing.
  if (names.length === 1) return partOf(names[0]!, map[names[0]!]);
  names.sort(byCodePoint);
  let out = '';
  for (const name of names) out += partOf(name, map[name]);
  return out;
}

/**
 * The identity of a key in DynamoDB JSON (a record's `raw.dynamodb.Keys`, an archive row's
 * `keys`; binary as base64 or bytes). Throws InvalidAttributeValueError, with the attribute's
 * path, for a value that is not an S, N or B DynamoDB could hold.
 */
export function keyIdentity(keys: unknown): KeyIdentity {
  return identityOf(keys, attributePart);
}

/**
 * The identity of an unmarshalled key (a record's `keys`): strings, numbers (number, bigint or
 * NumberValue) and bytes. The same text keyIdentity gives for the key in DynamoDB JSON.
 * Throws UnsupportedValueError for any other value.
 */
export function keyIdentityOfValues(keys: unknown): KeyIdentity {
  return identityOf(keys, valuePart);
}

/**
 * The identity of a record's item (its `raw.dynamodb.Keys`, read without unmarshalling). A key
 * DynamoDB could not hold is a MalformedRecordError naming the record and the attribute, so the
 * record is dead-lettered rather than filed under a made-up item.
 */
export function recordKeyIdentity(
  record: RecordIdentity & { raw: { dynamodb: { Keys: unknown } } },
): KeyIdentity {
  try {
    return keyIdentity(record.raw.dynamodb.Keys);
  } catch (error) {
    if (!(error instanceof InvalidAttributeValueError)) throw error;
    throw new MalformedRecordError(
      'invalid-attribute-value',
      error.detail,
      { eventID: record.eventID, sequenceNumber: record.sequenceNumber, path: `dynamodb.Keys.${error.path}` },
      { cause: error },
    );
  }
}
