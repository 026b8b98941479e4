import { decodeBase64Into, decodedLength, isBase64, toBytes, unpaddedBase64Length } from './binary.js';
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
 * Binaries of up to this many bytes get an ArrayBuffer of their own. V8 keeps a typed array this
 * small inside the JS heap (its typed_array_max_size_in_heap), where allocating one costs about
 * as much as a small object. A larger one needs an off-heap backing store (calloc, an extension
 * object the collector sweeps, external-memory accounting that brings collections forward):
 * measured at ~10× the cost, and more in GC. So the larger binaries of one image share one
 * ArrayBuffer, allocated once per image (see Conversion).
 */
const OWN_BUFFER_MAX_BYTES = 64;
/** Unpadded base64 lengths from here on decode to more than OWN_BUFFER_MAX_BYTES bytes. */
const SHARED_MIN_CHARS = Math.ceil(((OWN_BUFFER_MAX_BYTES + 1) * 4) / 3);

/** convertValue's answer for a binary it deferred (see Conversion): the caller records where it goes. */
const DEFERRED: unique symbol = Symbol('deferred binary');
/** The slot of a deferred set member: added to the set, in order, when resolved. */
const SET_MEMBER = -1;

/**
 * One image's conversion. Binaries larger than OWN_BUFFER_MAX_BYTES are not decoded where they
 * are met: their text is kept, with where the result goes, and after the walk all of them are
 * decoded into one ArrayBuffer sized to hold exactly them — one off-heap allocation per image
 * instead of one per binary. Each is then a Uint8Array view of that buffer: its bytes are its
 * own, but its `.buffer` also holds the image's other large binaries (never other images', never
 * unrelated memory as with Node's Buffer pool). Read it through byteOffset / byteLength, or
 * `slice()` it for a standalone copy. A binary that is the image's only large one, and any binary
 * of up to 64 bytes, has a buffer of exactly its own bytes.
 */
class Conversion {
  /**
   * Keeps the map (hidden class) of a fully initialized Conversion alive. V8 holds the map an
   * instance reaches through its field initializers only weakly: once a full GC finds no
   * instance, the map is freed and every function optimized for it (convertMap, convertValue…) is
   * discarded ("deoptimization, reason: weak objects"), to be recompiled on the next event.
   * Conversions live for one image, so without this a full GC between two events threw away the
   * unmarshaller's optimized code each time (measured: a full GC between 100-record invocations
   * cut the parser's rate to a fifth). A static field, because the class holds it strongly (a
   * module-level constant that no function reads may live on the stack of the module's
   * evaluation only). Never read, never changed.
   */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the instance map alive
  static readonly #shapeAnchor = new Conversion((text) => text, true);

  readonly num: NumberConverter;
  /** false: every binary decoded where it is met (the re-run that finds an error's path). */
  readonly share: boolean;
  /** Four entries per deferred binary: text (or bytes), unpadded length, container, slot. */
  deferred: unknown[] | undefined = undefined;
  /** Bytes of the shared buffer: the sum of the deferred large binaries. */
  sharedBytes = 0;
  /** How many deferred binaries are large: with one, it gets a buffer of its own, no view. */
  sharedCount = 0;
  /** The binary convertValue just answered DEFERRED for, until its caller places it. */
  text = '';
  end = 0;

  constructor(num: NumberConverter, share: boolean) {
    this.num = num;
    this.share = share;
  }

  /** Keeps a binary for the end of the walk, to go to `container[slot]` (a set: SET_MEMBER). */
  defer(source: string | Uint8Array, end: number, container: object, slot: string | number): void {
    if (end > 0) {
      const size = decodedLength(end);
      if (size > OWN_BUFFER_MAX_BYTES) {
        this.sharedBytes += size;
        this.sharedCount++;
      }
    }
    if (this.deferred === undefined) this.deferred = [source, end, container, slot];
    else this.deferred.push(source, end, container, slot);
  }

  /** Places the binary convertValue deferred (see binaryValue). */
  place(container: object, slot: string | number): void {
    this.defer(this.text, this.end, container, slot);
  }
}

/** B: decoded now, or deferred when large (share mode). Throws what toBytes throws, in order. */
function binaryValue(value: unknown, cx: Conversion): unknown {
  if (cx.share && typeof value === 'string' && value.length >= SHARED_MIN_CHARS) {
    const end = unpaddedBase64Length(value);
    if (end >= SHARED_MIN_CHARS) {
      // The caller, which knows where the value goes, calls cx.place.
      cx.text = value;
      cx.end = end;
      return DEFERRED;
    }
  }
  return toBytes(value);
}

/**
 * BS with a large member (share mode): every member deferred, small ones too, so that the set
 * receives them in their order. Lengths, types and padding are checked now, in order.
 */
function deferBinarySet(list: unknown[], out: Set<Uint8Array>, cx: Conversion): void {
  for (let i = 0; i < list.length; i++) {
    const member = list[i];
    const end = typeof member === 'string' ? unpaddedBase64Length(member) : -1;
    if (end < 0) {
      // Not base64 by length, or not a string: toBytes throws (or passes SDK bytes through).
      let bytes: Uint8Array;
      try {
        bytes = toBytes(member);
      } catch (error) {
        throw addSegment(error, i);
      }
      cx.defer(bytes, -1, out, SET_MEMBER);
    } else cx.defer(member as string, end, out, SET_MEMBER);
  }
}

function hasLargeMember(list: unknown[]): boolean {
  for (let i = 0; i < list.length; i++) {
    const member = list[i];
    if (typeof member === 'string' && member.length >= SHARED_MIN_CHARS) return true;
  }
  return false;
}

/**
 * Both wire shapes are accepted: `B` / `BS` may be base64 (Lambda) or Uint8Array (SDK), so
 * GetRecords output is unmarshalled without first being rewritten.
 *
 * The dispatch reads the first key and its value in one for-in step (V8 loads `av[key]` there
 * through the enum cache, with no property lookup) and switches on the key: measured faster than
 * probing `av.S`, `av.N`, … in turn, which is a megamorphic load per probe. Each case then only
 * checks the value it already holds.
 */
function convertValue(av: AttributeValue, cx: Conversion): unknown {
  if (av === null || typeof av !== 'object' || Array.isArray(av)) {
    fail('wrong-shape', `an AttributeValue must be an object, got ${av === null ? 'null' : typeof av}`);
  }
  let type: string | undefined;
  let value: unknown;
  let more = false;
  for (const key in av) {
    if (type === undefined) {
      type = key;
      value = (av as Record<string, unknown>)[key];
    } else {
      more = true;
      break;
    }
  }
  if (more) {
    type = soleDefinedKey(av);
    value = type === undefined ? undefined : (av as Record<string, unknown>)[type];
  }
  switch (type) {
    case 'S':
      if (typeof value !== 'string') fail('wrong-shape', 'S must be a string');
      return value;
    case 'N':
      return cx.num(value as string);
    case 'M':
      return convertMap(value as AttributeMap, cx);
    case 'L': {
      if (!Array.isArray(value)) fail('wrong-shape', 'L must be an array');
      const out = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) {
        let element: unknown;
        try {
          element = convertValue(value[i] as AttributeValue, cx);
        } catch (error) {
          throw addSegment(error, i);
        }
        if (element === DEFERRED) {
          cx.place(out, i);
          out[i] = undefined;
        } else out[i] = element;
      }
      return out;
    }
    case 'BOOL':
      if (typeof value !== 'boolean') fail('wrong-shape', 'BOOL must be a boolean');
      return value;
    case 'NULL':
      if (value !== true) fail('wrong-shape', 'NULL must be true');
      return null;
    case 'SS': {
      const list = stringArray(value, 'SS');
      for (let i = 0; i < list.length; i++) {
        if (typeof list[i] !== 'string')
          throw addSegment(new InvalidAttributeValueError('wrong-shape', 'SS members must be strings'), i);
      }
      // Checked first, then handed whole to the constructor, which copies an array in one step.
      return new Set<string>(list);
    }
    case 'NS': {
      const list = stringArray(value, 'NS');
      const num = cx.num;
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
      return binaryValue(value, cx);
    case 'BS': {
      if (!Array.isArray(value)) fail('wrong-shape', 'BS must be an array');
      const out = new Set<Uint8Array>();
      if (cx.share && hasLargeMember(value)) {
        deferBinarySet(value, out, cx);
        return out;
      }
      for (let i = 0; i < value.length; i++) {
        try {
          out.add(toBytes(value[i]));
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

function convertMap(map: AttributeMap, cx: Conversion): Item {
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    fail('wrong-shape', `an attribute map must be an object, got ${map === null ? 'null' : typeof map}`);
  }
  const out: Item = {};
  for (const key in map) {
    let value: unknown;
    try {
      value = convertValue(map[key] as AttributeValue, cx);
    } catch (error) {
      throw addSegment(error, key);
    }
    if (value === DEFERRED) {
      cx.place(out, key);
      // The key takes its place in the item's key order now; the bytes arrive in resolve().
      value = undefined;
    }
    setProperty(out, key, value);
  }
  return out;
}

/**
 * Decodes the deferred binaries into their places: large ones into views of one ArrayBuffer,
 * small set members into their own. False when a text turns out not to be base64 (its
 * characters are checked here, not when it was deferred).
 */
function resolve(cx: Conversion): boolean {
  const deferred = cx.deferred as unknown[];
  // One large binary (the common case) is decoded into a buffer of its own, as small ones are.
  const shared = cx.sharedCount > 1 ? new ArrayBuffer(cx.sharedBytes) : undefined;
  let offset = 0;
  for (let i = 0; i < deferred.length; i += 4) {
    const source = deferred[i] as string | Uint8Array;
    const end = deferred[i + 1] as number;
    const container = deferred[i + 2] as Record<string | number, unknown> | Set<Uint8Array>;
    const slot = deferred[i + 3] as string | number;
    let bytes: Uint8Array;
    if (typeof source !== 'string') bytes = source;
    else {
      const size = decodedLength(end);
      if (size > OWN_BUFFER_MAX_BYTES && shared !== undefined) {
        bytes = new Uint8Array(shared, offset, size);
        offset += size;
      } else bytes = new Uint8Array(size);
      if (!decodeBase64Into(source, end, bytes, 0)) return false;
    }
    if (slot === SET_MEMBER) (container as Set<Uint8Array>).add(bytes);
    else setProperty(container as Record<string, unknown>, slot as string, bytes);
  }
  return true;
}

function deferredAreBase64(deferred: unknown[]): boolean {
  for (let i = 0; i < deferred.length; i += 4) {
    const source = deferred[i];
    if (typeof source === 'string' && !isBase64(source)) return false;
  }
  return true;
}

/**
 * Whether a walk that failed must be re-run without deferral to report its error. A walk that
 * decodes every binary where it is met reports the first bad value in document order; a
 * deferred binary's characters are only read at the end, so if one of them is not base64 the
 * error thrown may be a later value's. Only invalid input is walked twice.
 */
function hidesBinaryError(cx: Conversion): boolean {
  return cx.deferred !== undefined && !deferredAreBase64(cx.deferred);
}

/** An image (Keys, NewImage, OldImage) to an item. Throws InvalidAttributeValueError without the path in its message. */
export function convertImage(map: AttributeMap, num: NumberConverter): Item {
  const cx = new Conversion(num, true);
  let item: Item;
  try {
    item = convertMap(map, cx);
  } catch (error) {
    if (hidesBinaryError(cx)) convertMap(map, new Conversion(num, false));
    throw error;
  }
  // A deferred text that is not base64: the walk without deferral throws its error and path.
  if (cx.deferred !== undefined && !resolve(cx)) return convertMap(map, new Conversion(num, false));
  return item;
}

/** One AttributeValue to its value, binaries shared as within an image. */
function convertTopValue(av: AttributeValue, num: NumberConverter): unknown {
  const cx = new Conversion(num, true);
  // A box, so that a lone large binary has a slot to be resolved into like any other.
  const box: unknown[] = [undefined];
  try {
    const value = convertValue(av, cx);
    if (value === DEFERRED) cx.place(box, 0);
    else box[0] = value;
  } catch (error) {
    if (hidesBinaryError(cx)) convertValue(av, new Conversion(num, false));
    throw error;
  }
  if (cx.deferred !== undefined && !resolve(cx)) return convertValue(av, new Conversion(num, false));
  return box[0];
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
    return convertImage(map as AttributeMap, num) as T;
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
    return convertTopValue(value as AttributeValue, num);
  } catch (error) {
    throw withPath(error);
  }
}
