import { defineOptions } from '../core/options.js';
import { toBase64 } from './binary.js';
import { UnsupportedValueError } from './errors.js';
import { NumberValue } from './number-value.js';
import type { AttributeMap, AttributeValue, SdkAttributeMap, SdkAttributeValue } from './types.js';

/** Options of marshall and marshallValue: undefined members, and the shape of binary values. */
export interface MarshallOptions {
  /** Drop `undefined` members of objects, arrays and sets instead of throwing. Default false. */
  removeUndefined?: boolean;
  /**
   * `'bytes'` (default) keeps `B` / `BS` as Uint8Array, the shape the AWS SDK clients send and
   * receive and `@aws-sdk/util-dynamodb`'s marshall gives; `'base64'` writes base64 strings, the
   * shape of a Lambda event (and of `record.raw`).
   */
  binary?: 'base64' | 'bytes';
}

const readOptions = /* @__PURE__ */ defineOptions<MarshallOptions>()('marshall', {
  removeUndefined: { kind: 'boolean', default: false },
  binary: { kind: 'enum', values: ['base64', 'bytes'], default: 'bytes' },
});

interface Settings {
  readonly removeUndefined: boolean;
  readonly bytes: boolean;
}

function unsupported(detail: string): never {
  throw new UnsupportedValueError(detail);
}

function addSegment(error: unknown, segment: string | number): unknown {
  if (error instanceof UnsupportedValueError) error.segments.unshift(segment);
  return error;
}

function numberText(value: number): string {
  if (!Number.isFinite(value)) unsupported(`${value} has no DynamoDB representation`);
  return String(value);
}

function bytesOf(value: Uint8Array, s: Settings): Uint8Array | string {
  return s.bytes ? value : toBase64(value);
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function convertSet(set: Set<unknown>, s: Settings): AttributeValue {
  let kind: 'S' | 'N' | 'B' | undefined;
  const out: (string | Uint8Array)[] = [];
  let i = 0;
  for (const member of set) {
    try {
      if (member === undefined) {
        if (s.removeUndefined) continue;
        unsupported('undefined in a Set (pass removeUndefined: true to drop it)');
      }
      let memberKind: 'S' | 'N' | 'B';
      let text: string | Uint8Array;
      if (typeof member === 'string') {
        memberKind = 'S';
        text = member;
      } else if (typeof member === 'number') {
        memberKind = 'N';
        text = numberText(member);
      } else if (typeof member === 'bigint') {
        memberKind = 'N';
        text = String(member);
      } else if (member instanceof NumberValue) {
        memberKind = 'N';
        text = member.value;
      } else if (member instanceof Uint8Array) {
        memberKind = 'B';
        text = bytesOf(member, s);
      } else {
        return unsupported('a Set may hold only strings, numbers or Uint8Arrays');
      }
      if (kind !== undefined && kind !== memberKind)
        unsupported('a Set must not mix strings, numbers and binaries');
      kind = memberKind;
      out.push(text);
      i++;
    } catch (error) {
      throw addSegment(error, i);
    }
  }
  if (kind === undefined) unsupported('DynamoDB does not allow empty sets');
  if (kind === 'S') return { SS: out as string[] };
  if (kind === 'N') return { NS: out as string[] };
  return { BS: out as string[] };
}

function convert(value: unknown, s: Settings): AttributeValue {
  switch (typeof value) {
    case 'string':
      return { S: value };
    case 'number':
      return { N: numberText(value) };
    case 'bigint':
      return { N: String(value) };
    case 'boolean':
      return { BOOL: value };
    case 'object': {
      if (value === null) return { NULL: true };
      if (Array.isArray(value)) {
        const out: AttributeValue[] = [];
        for (let i = 0; i < value.length; i++) {
          const member = value[i];
          if (member === undefined) {
            if (s.removeUndefined) continue;
            throw addSegment(
              new UnsupportedValueError('undefined (pass removeUndefined: true to drop it)'),
              i,
            );
          }
          try {
            out.push(convert(member, s));
          } catch (error) {
            throw addSegment(error, i);
          }
        }
        return { L: out };
      }
      if (value instanceof NumberValue) return { N: value.value };
      if (value instanceof Uint8Array) return { B: bytesOf(value, s) as string };
      if (value instanceof Set) return convertSet(value, s);
      if (value instanceof Map) {
        const out: AttributeMap = {};
        for (const [key, member] of value) {
          if (typeof key !== 'string') unsupported('Map keys must be strings');
          addMember(out, key, member, s);
        }
        return { M: out };
      }
      if (isPlainObject(value)) return { M: convertObject(value as Record<string, unknown>, s) };
      return unsupported(
        `${value.constructor?.name ?? 'object'} has no DynamoDB representation (convert it to a plain value first)`,
      );
    }
    default:
      return unsupported(`${typeof value} has no DynamoDB representation`);
  }
}

function addMember(out: AttributeMap, key: string, member: unknown, s: Settings): void {
  if (member === undefined) {
    if (s.removeUndefined) return;
    throw addSegment(new UnsupportedValueError('undefined (pass removeUndefined: true to drop it)'), key);
  }
  try {
    const av = convert(member, s);
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: av, enumerable: true, writable: true, configurable: true });
    else out[key] = av;
  } catch (error) {
    throw addSegment(error, key);
  }
}

function convertObject(item: Record<string, unknown>, s: Settings): AttributeMap {
  const out: AttributeMap = {};
  for (const key in item) addMember(out, key, item[key], s);
  return out;
}

function settings(options: MarshallOptions | undefined, where: string): Settings {
  const o = readOptions(options, where);
  return { removeUndefined: o.removeUndefined, bytes: o.binary === 'bytes' };
}

function withPath(error: unknown): unknown {
  return error instanceof UnsupportedValueError ? error.withPath() : error;
}

/**
 * A plain item back to DynamoDB JSON, exactly: `number`, `bigint` and `NumberValue` produce the
 * same `N` text `unmarshall` read. Throws UnsupportedValueError (with the path) for values
 * DynamoDB cannot store: empty sets, NaN / Infinity, mixed sets, class instances, functions.
 */
export function marshall(
  item: Record<string, unknown>,
  options: MarshallOptions & { binary: 'base64' },
): AttributeMap;
export function marshall(
  item: Record<string, unknown>,
  options?: MarshallOptions & { binary?: 'bytes' },
): SdkAttributeMap;
export function marshall(
  item: Record<string, unknown>,
  options?: MarshallOptions,
): AttributeMap | SdkAttributeMap;
export function marshall(
  item: Record<string, unknown>,
  options?: MarshallOptions,
): AttributeMap | SdkAttributeMap {
  const s = settings(options, 'marshall');
  if (item === null || typeof item !== 'object' || Array.isArray(item) || !isPlainObject(item)) {
    throw new UnsupportedValueError(
      'marshall takes a plain object (an item); use marshallValue for a single value',
    );
  }
  try {
    return convertObject(item, s);
  } catch (error) {
    throw withPath(error);
  }
}

/** One JS value to one AttributeValue. */
export function marshallValue(
  value: unknown,
  options: MarshallOptions & { binary: 'base64' },
): AttributeValue;
export function marshallValue(
  value: unknown,
  options?: MarshallOptions & { binary?: 'bytes' },
): SdkAttributeValue;
export function marshallValue(value: unknown, options?: MarshallOptions): AttributeValue | SdkAttributeValue;
export function marshallValue(value: unknown, options?: MarshallOptions): AttributeValue | SdkAttributeValue {
  const s = settings(options, 'marshallValue');
  try {
    return convert(value, s);
  } catch (error) {
    throw withPath(error);
  }
}
