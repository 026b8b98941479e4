import { toBytes } from './binary.js';
import { InvalidAttributeValueError } from './errors.js';
import { type NumberConverter, type NumberPolicy, numberConverter } from './numbers.js';
import { assertOptions } from './options.js';
import type { AttributeMap, AttributeValue, Item, SdkAttributeMap, SdkAttributeValue } from './types.js';

export interface UnmarshallOptions {
  /** How `N` / `NS` values become JS values. Default `'exact'`: see NumberPolicy. */
  numbers?: NumberPolicy;
}

const UNMARSHALL_OPTIONS = ['numbers'] as const;

function fail(reason: 'wrong-shape' | 'no-type' | 'multiple-types' | 'unknown-type', detail: string): never {
  throw new InvalidAttributeValueError(reason, detail);
}

function addSegment(error: unknown, segment: string | number): unknown {
  if (error instanceof InvalidAttributeValueError) error.segments.unshift(segment);
  return error;
}

function setProperty(out: Record<string, unknown>, key: string, value: unknown): void {
  // An attribute may legally be called "__proto__"; plain assignment would replace the prototype.
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

function stringArray(list: unknown, type: string): string[] {
  if (!Array.isArray(list)) fail('wrong-shape', `${type} must be an array`);
  return list;
}

/**
 * The slow path for an AttributeValue with several keys: SDK-built objects may carry type keys
 * whose value is undefined, which do not count.
 */
function soleDefinedKey(av: AttributeValue): string | undefined {
  let type: string | undefined;
  for (const key in av) {
    if ((av as Record<string, unknown>)[key] === undefined) continue;
    if (type !== undefined)
      fail('multiple-types', `an AttributeValue has exactly one type key, got ${type} and ${key}`);
    type = key;
  }
  return type;
}

/**
 * Both wire shapes are accepted: `B` / `BS` may be base64 (Lambda) or Uint8Array (SDK), so
 * GetRecords output is unmarshalled without first being rewritten.
 */
export function convertValue(av: AttributeValue, num: NumberConverter): unknown {
  if (av === null || typeof av !== 'object' || Array.isArray(av)) {
    fail('wrong-shape', `an AttributeValue must be an object, got ${av === null ? 'null' : typeof av}`);
  }
  let type: string | undefined;
  let more = false;
  for (const key in av) {
    if (type === undefined) type = key;
    else {
      more = true;
      break;
    }
  }
  if (more) type = soleDefinedKey(av);
  switch (type) {
    case 'S': {
      const s = av.S;
      if (typeof s !== 'string') fail('wrong-shape', 'S must be a string');
      return s;
    }
    case 'N':
      return num(av.N as string);
    case 'M':
      return convertMap(av.M as AttributeMap, num);
    case 'L': {
      const list = av.L;
      if (!Array.isArray(list)) fail('wrong-shape', 'L must be an array');
      const out = new Array<unknown>(list.length);
      for (let i = 0; i < list.length; i++) {
        try {
          out[i] = convertValue(list[i] as AttributeValue, num);
        } catch (error) {
          throw addSegment(error, i);
        }
      }
      return out;
    }
    case 'BOOL':
      if (typeof av.BOOL !== 'boolean') fail('wrong-shape', 'BOOL must be a boolean');
      return av.BOOL;
    case 'NULL':
      if (av.NULL !== true) fail('wrong-shape', 'NULL must be true');
      return null;
    case 'SS': {
      const list = stringArray(av.SS, 'SS');
      const out = new Set<string>();
      for (let i = 0; i < list.length; i++) {
        if (typeof list[i] !== 'string')
          throw addSegment(new InvalidAttributeValueError('wrong-shape', 'SS members must be strings'), i);
        out.add(list[i] as string);
      }
      return out;
    }
    case 'NS': {
      const list = stringArray(av.NS, 'NS');
      const out = new Set<unknown>();
      for (let i = 0; i < list.length; i++) {
        try {
          out.add(num(list[i] as string));
        } catch (error) {
          throw addSegment(error, i);
        }
      }
      return out;
    }
    case 'B':
      return toBytes(av.B);
    case 'BS': {
      const list = av.BS as unknown;
      if (!Array.isArray(list)) fail('wrong-shape', 'BS must be an array');
      const out = new Set<Uint8Array>();
      for (let i = 0; i < list.length; i++) {
        try {
          out.add(toBytes(list[i]));
        } catch (error) {
          throw addSegment(error, i);
        }
      }
      return out;
    }
    case undefined:
      return fail('no-type', 'an AttributeValue has exactly one type key, got none');
    default:
      return fail('unknown-type', `unknown AttributeValue type ${JSON.stringify(type)}`);
  }
}

export function convertMap(map: AttributeMap, num: NumberConverter): Item {
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    fail('wrong-shape', `an attribute map must be an object, got ${map === null ? 'null' : typeof map}`);
  }
  const out: Item = {};
  for (const key in map) {
    try {
      setProperty(out, key, convertValue(map[key] as AttributeValue, num));
    } catch (error) {
      throw addSegment(error, key);
    }
  }
  return out;
}

function withPath(error: unknown): unknown {
  return error instanceof InvalidAttributeValueError ? error.withPath() : error;
}

/**
 * DynamoDB JSON (an attribute map, as in Keys / NewImage / OldImage) to a plain item.
 * Never throws on a valid DynamoDB number; throws InvalidAttributeValueError (with the path) on
 * anything DynamoDB could not have produced.
 */
/** Takes either shape: the Lambda event's (base64 binaries) or the SDK's (Uint8Array). */
export function unmarshall<T extends Item = Item>(
  map: AttributeMap | SdkAttributeMap,
  options?: UnmarshallOptions,
): T {
  assertOptions(options, UNMARSHALL_OPTIONS, 'unmarshall');
  const num = numberConverter(options?.numbers, 'unmarshall');
  try {
    // The converters read B / BS as either form (binary.ts), so one walk serves both shapes.
    return convertMap(map as AttributeMap, num) as T;
  } catch (error) {
    throw withPath(error);
  }
}

/** One AttributeValue (`{ N: "1" }`) to its JS value. */
export function unmarshallValue(
  value: AttributeValue | SdkAttributeValue,
  options?: UnmarshallOptions,
): unknown {
  assertOptions(options, UNMARSHALL_OPTIONS, 'unmarshallValue');
  const num = numberConverter(options?.numbers, 'unmarshallValue');
  try {
    return convertValue(value as AttributeValue, num);
  } catch (error) {
    throw withPath(error);
  }
}
