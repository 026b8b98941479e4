import { defineOptions } from '../core/options.js';
import { decodeBase64Into, decodedLength, isBase64, toBytes, unpaddedBase64Length } from './binary.js';
import { InvalidAttributeValueError } from './errors.js';
import {
  duplicateBytesIndex,
  duplicateNumberIndex,
  duplicateStringIndex,
  MAX_NESTING_LEVEL,
} from './limits.js';
import {
  exactNumber,
  NUMBERS_OPTION,
  type NumberConverter,
  type NumberPolicy,
  numberConverter,
} from './numbers.js';
import type { AttributeMap, AttributeValue, Item, SdkAttributeMap, SdkAttributeValue } from './types.js';

/** Options of unmarshall and unmarshallValue: how numbers become JS values. */
export interface UnmarshallOptions {
  /** How `N` / `NS` values become JS values. Default `'exact'`: see NumberPolicy. */
  numbers?: NumberPolicy;
}

const readOptions = /* @__PURE__ */ defineOptions<UnmarshallOptions>()('unmarshall', {
  numbers: NUMBERS_OPTION,
});

function fail(
  reason: 'wrong-shape' | 'no-type' | 'multiple-types' | 'unknown-type' | 'empty-set' | 'too-deep',
  detail: string,
): never {
  throw new InvalidAttributeValueError(reason, detail);
}

function duplicateMember(type: string, index: number): InvalidAttributeValueError {
  return addSegment(
    new InvalidAttributeValueError(
      'duplicate-set-member',
      `${type} holds this member twice: DynamoDB sets have unique members`,
    ),
    index,
  ) as InvalidAttributeValueError;
}

/**
 * A map or list whose members sit below level 32. Thrown by the container, so the walk never goes
 * deeper than DynamoDB does: a corrupted image nested thousands of levels deep ends here, not in
 * a RangeError from the stack.
 */
function tooDeep(): never {
  return fail('too-deep', `nested deeper than DynamoDB's ${MAX_NESTING_LEVEL} levels`);
}

/** Whether a map has no attribute to walk (enumerated as the walks enumerate it, with for-in). */
export function isEmptyMap(map: object): boolean {
  for (const _ in map) return false;
  return true;
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

/** No names yet: shared, so a one-off Conversion (unmarshall(), a re-run) allocates no array for them. */
const NO_NAMES: readonly string[] = Object.freeze([]);

/** convertValue's answer for a binary it deferred (see Conversion): the caller records where it goes. */
const DEFERRED: unique symbol = Symbol('deferred binary');

/**
 * One image's conversion. Binaries larger than OWN_BUFFER_MAX_BYTES (in maps and lists; set
 * members and a lone unmarshallValue are decoded in place) are not decoded where they are met:
 * their text is kept, with where the result goes, and after the walk all of them are decoded
 * into one ArrayBuffer sized to hold exactly them — one off-heap allocation per image instead of
 * one per binary. Each is then a Uint8Array view of that buffer: its bytes are its own, but its
 * `.buffer` also holds the image's other large binaries (never other images', never unrelated
 * memory as with Node's Buffer pool). Read it through byteOffset / byteLength, or `slice()` it
 * for a standalone copy. A binary that is the image's only large one, and any binary of up to 64
 * bytes, has a buffer of exactly its own bytes.
 *
 * A record parser keeps one Conversion for all its images (imageConversion): a walk is
 * synchronous, so images never share one at the same time, except when a number policy of the
 * user's reads another image from inside a walk — that walk gets a Conversion of its own (busy).
 * Reused, the object and its deferred list are allocated once per parser instead of once per
 * image (~200 bytes per record of a NEW_AND_OLD_IMAGES stream).
 */
export class Conversion {
  /**
   * Keeps the map (hidden class) of a fully initialized Conversion alive. V8 holds the map an
   * instance reaches through its field initializers only weakly: once a full GC finds no
   * instance, the map is freed and every function optimized for it (convertMap, convertValue…) is
   * discarded ("deoptimization, reason: weak objects"), to be recompiled on the next event.
   * A parser's Conversion lives with the parser, but unmarshall() and a re-run make one per call,
   * and a handler may make a parser per event. When Conversions lived for one image, a full GC
   * between two events threw away the unmarshaller's optimized code each time without this
   * (measured: a full GC between 100-record invocations cut the parser's rate to a fifth). A
   * static field, because the class holds it strongly (a module-level constant that no function
   * reads may live on the stack of the module's evaluation only). Never read, never changed.
   */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the instance map alive
  static readonly #shapeAnchor = new Conversion((text) => text, true);

  readonly num: NumberConverter;
  /** false: every binary decoded where it is met (the re-run that finds an error's path). */
  readonly share: boolean;
  /**
   * Four entries per deferred binary: its base64 text, unpadded length, container, slot; the
   * first `deferredLength` are this walk's. Its slots are cleared after each walk, so a reused
   * Conversion holds on to no image, but the array keeps its length: `length = 0` would free its
   * backing store, and each image would allocate a new one (~150 bytes). So it keeps the largest
   * any image needed: at most ~150 KB of empty slots for a 400 KB item of large binaries only.
   */
  readonly deferred: unknown[] = [];
  deferredLength = 0;
  /** The deferred binaries' bytes: the size of the buffer they share. */
  sharedBytes = 0;
  /** The binary convertValue just answered DEFERRED for, until its caller places it. */
  text = '';
  end = 0;
  /** The nesting level of the values being converted: 1 for an image's attributes (see MAX_NESTING_LEVEL). */
  level = 0;
  /** A walk is using this Conversion. */
  busy = false;
  /**
   * The attribute names of the images this parser meets, in order, as an object whose values are
   * all undefined (see convertItem); undefined until one shape repeats. Names only, no values.
   */
  shape: Item | undefined = undefined;
  shapeKeys: readonly string[] = NO_NAMES;
  /** Images in a row that did not start with shapeKeys. */
  shapeMisses = 0;
  /** Misses in a row after which the shape follows the images (see keepShape). */
  shapePatience = 2;

  constructor(num: NumberConverter, share: boolean) {
    this.num = num;
    this.share = share;
  }

  /** Keeps the binary convertValue deferred (see binaryValue), to go to `container[slot]`. */
  place(container: object, slot: string | number): void {
    const deferred = this.deferred;
    const at = this.deferredLength;
    // Past the end, each store appends.
    deferred[at] = this.text;
    deferred[at + 1] = this.end;
    deferred[at + 2] = container;
    deferred[at + 3] = slot;
    this.deferredLength = at + 4;
  }

  /** Ready for the next walk, holding nothing of the last one. */
  release(): void {
    const deferred = this.deferred;
    for (let i = 0; i < this.deferredLength; i++) deferred[i] = undefined;
    this.deferredLength = 0;
    this.sharedBytes = 0;
    this.text = '';
    this.level = 0;
    this.busy = false;
  }
}

/** The Conversion a record parser reuses for every image it converts (see Conversion). */
export function imageConversion(num: NumberConverter): Conversion {
  return new Conversion(num, true);
}

/** B: decoded now, or deferred when large (share mode). Throws what toBytes throws, in order. */
function binaryValue(value: unknown, cx: Conversion): unknown {
  if (cx.share && typeof value === 'string' && value.length >= SHARED_MIN_CHARS) {
    const end = unpaddedBase64Length(value);
    if (end >= SHARED_MIN_CHARS) {
      // The caller, which knows where the value goes, calls cx.place.
      cx.text = value;
      cx.end = end;
      cx.sharedBytes += decodedLength(end);
      return DEFERRED;
    }
  }
  return toBytes(value);
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
      if (++cx.level > MAX_NESTING_LEVEL && value.length > 0) tooDeep();
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
      cx.level--;
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
      if (list.length === 0) fail('empty-set', 'SS must not be empty: DynamoDB has no empty sets');
      for (let i = 0; i < list.length; i++) {
        if (typeof list[i] !== 'string')
          throw addSegment(new InvalidAttributeValueError('wrong-shape', 'SS members must be strings'), i);
      }
      // Checked first, then handed whole to the constructor, which copies an array in one step;
      // a member given twice shows as a smaller set.
      const out = new Set<string>(list);
      if (out.size !== list.length) throw duplicateMember('SS', duplicateStringIndex(list));
      return out;
    }
    case 'NS': {
      const list = stringArray(value, 'NS');
      if (list.length === 0) fail('empty-set', 'NS must not be empty: DynamoDB has no empty sets');
      const num = cx.num;
      const out = new Set<unknown>();
      // Under the exact policy equal values give equal numbers or bigints, so the set's size shows
      // a member given twice; a NumberValue (`1.50`, `1E3`) or another policy compares texts by value.
      let bySize = num === exactNumber;
      for (let i = 0; i < list.length; i++) {
        let member: unknown;
        try {
          member = num(list[i] as string);
        } catch (error) {
          throw addSegment(error, i);
        }
        if (typeof member === 'object') bySize = false;
        out.add(member);
      }
      if (bySize) {
        if (out.size !== list.length) throw duplicateMember('NS', duplicateNumberIndex(list));
      } else if (list.length > 1) {
        const at = duplicateNumberIndex(list);
        if (at >= 0) throw duplicateMember('NS', at);
      }
      return out;
    }
    case 'B':
      return binaryValue(value, cx);
    case 'BS': {
      if (!Array.isArray(value)) fail('wrong-shape', 'BS must be an array');
      if (value.length === 0) fail('empty-set', 'BS must not be empty: DynamoDB has no empty sets');
      // Set members are decoded in place: sharing stops at maps and lists (a set would need
      // its members placed in order after the walk).
      const members = new Array<Uint8Array>(value.length);
      for (let i = 0; i < value.length; i++) {
        try {
          members[i] = toBytes(value[i]);
        } catch (error) {
          throw addSegment(error, i);
        }
      }
      const twice = duplicateBytesIndex(members);
      if (twice >= 0) throw duplicateMember('BS', twice);
      return new Set<Uint8Array>(members);
    }
    case undefined:
      return fail('no-type', 'an AttributeValue has exactly one type key, got none');
    default:
      return fail('unknown-type', `unknown AttributeValue type ${JSON.stringify(type)}`);
  }
}

function checkMap(map: AttributeMap): void {
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    fail('wrong-shape', `an attribute map must be an object, got ${map === null ? 'null' : typeof map}`);
  }
}

function convertMap(map: AttributeMap, cx: Conversion): Item {
  checkMap(map);
  if (++cx.level > MAX_NESTING_LEVEL && !isEmptyMap(map)) tooDeep();
  return fillMap(map, cx, {});
}

/** The least and most attributes an image must have for its shape to be kept (see convertItem). */
const SHAPE_MIN_KEYS = 5;
const SHAPE_MAX_KEYS = 64;
const SHAPE_MAX_PATIENCE = 64;

/**
 * An image's top level (level 1), built from the shape of the images before it when it starts
 * with the same attribute names. `{}` has room for four properties in the object itself; each
 * further one goes to a property array that grows a few slots at a time, copied at every step, so
 * an item of 18 attributes allocated ~550 bytes, over half of it arrays already dropped. A copy of
 * an object that has the names (`{ ...shape }`) is allocated at its final size in one step, and
 * the attributes are then stored into properties that exist: ~250 bytes for such an item
 * (bench/why/throughput.md has the times). Items of one table mostly repeat their shape (their names arrive in the
 * same order); when they do not, a miss costs a pass over the names up to the first that differs,
 * and the shape follows the images only after misses in a row (keepShape), so alternating shapes
 * do not rebuild it each time.
 */
function convertItem(map: AttributeMap, cx: Conversion): Item {
  checkMap(map);
  // Level 1: never too deep.
  cx.level++;
  const shape = cx.shape;
  // Two misses in a row: the images are not following the shape; stop checking until the next.
  if (shape !== undefined && cx.shapeMisses < 2 && startsWithShape(map, cx.shapeKeys)) {
    cx.shapeMisses = 0;
    cx.shapePatience = 2;
    return fillMap(map, cx, { ...shape });
  }
  const out = fillMap(map, cx, {});
  if (++cx.shapeMisses >= cx.shapePatience) keepShape(cx, out);
  return out;
}

/** Whether the map's attribute names begin with `keys`, in order (further names are added as met). */
function startsWithShape(map: AttributeMap, keys: readonly string[]): boolean {
  const n = keys.length;
  let i = 0;
  for (const key in map) {
    if (i === n) return true;
    if (key !== keys[i]) return false;
    i++;
  }
  return i === n;
}

/**
 * The shape of `item` kept for the images after it. Each change without an image built on the
 * shape in between means the images vary more than they repeat: the next waits twice as many
 * misses, up to 64, so a stream whose every image differs pays for a shape once in 64 images, not
 * once in two. An image built on the shape brings it back to two.
 */
function keepShape(cx: Conversion, item: Item): void {
  cx.shapePatience = Math.min(cx.shapePatience * 2, SHAPE_MAX_PATIENCE);
  cx.shapeMisses = 0;
  const keys = Object.keys(item);
  if (keys.length < SHAPE_MIN_KEYS || keys.length > SHAPE_MAX_KEYS) return;
  const shape: Item = {};
  for (const key of keys) setProperty(shape, key, undefined);
  cx.shape = shape;
  cx.shapeKeys = keys;
}

/** Converts each attribute of `map` into `out`, in the map's order; returns out. */
function fillMap(map: AttributeMap, cx: Conversion, out: Item): Item {
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
  cx.level--;
  return out;
}

/**
 * Decodes the deferred binaries into their places, as views of one ArrayBuffer sized to hold
 * exactly them (a lone one, the common case, so has a buffer of its own, as small ones do). False
 * when a text turns out not to be base64 (its characters are read here, not when it was deferred).
 */
function resolve(cx: Conversion): boolean {
  const deferred = cx.deferred;
  const length = cx.deferredLength;
  // Decoded natively through one Buffer view of the image's memory (Node's decoder, not a loop in
  // JavaScript); each value is a plain Uint8Array view of its own bytes, never the Buffer.
  const memory = new ArrayBuffer(cx.sharedBytes);
  const writer = Buffer.from(memory);
  let offset = 0;
  for (let i = 0; i < length; i += 4) {
    const end = deferred[i + 1] as number;
    const size = decodedLength(end);
    if (!decodeBase64Into(deferred[i] as string, end, writer, offset)) return false;
    setProperty(
      deferred[i + 2] as Record<string, unknown>,
      deferred[i + 3] as string,
      new Uint8Array(memory, offset, size),
    );
    offset += size;
  }
  return true;
}

function deferredAreBase64(cx: Conversion): boolean {
  const deferred = cx.deferred;
  for (let i = 0; i < cx.deferredLength; i += 4) if (!isBase64(deferred[i] as string)) return false;
  return true;
}

/**
 * Whether a walk that failed must be re-run without deferral to report its error. A walk that
 * decodes every binary where it is met reports the first bad value in document order; a
 * deferred binary's characters are only read at the end, so if one of them is not base64 the
 * error thrown may be a later value's. Only invalid input is walked twice.
 */
function hidesBinaryError(cx: Conversion): boolean {
  return cx.deferredLength !== 0 && !deferredAreBase64(cx);
}

/**
 * An image (Keys, NewImage, OldImage) to an item, with `reusable` (imageConversion) unless a
 * walk is using it. Throws InvalidAttributeValueError without the path in its message. `image`:
 * a NewImage or OldImage of a parser's stream, built on the shape of the ones before it (see
 * convertItem); keys, of one or two attributes, and one-off maps gain nothing from it.
 */
export function convertImage(map: AttributeMap, reusable: Conversion, image = false): Item {
  const cx = reusable.busy ? new Conversion(reusable.num, true) : reusable;
  cx.busy = true;
  try {
    return convertWithDeferral(map, cx, image);
  } finally {
    cx.release();
  }
}

function convertWithDeferral(map: AttributeMap, cx: Conversion, image: boolean): Item {
  let item: Item;
  try {
    item = image ? convertItem(map, cx) : convertMap(map, cx);
  } catch (error) {
    if (hidesBinaryError(cx)) convertMap(map, new Conversion(cx.num, false));
    throw error;
  }
  // A deferred text that is not base64: the walk without deferral throws its error and path.
  if (cx.deferredLength !== 0 && !resolve(cx)) return convertMap(map, new Conversion(cx.num, false));
  return item;
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
  const num = numberConverter(readOptions(options).numbers);
  try {
    // The converters read B / BS as either form (binary.ts), so one walk serves both shapes.
    return convertImage(map as AttributeMap, imageConversion(num)) as T;
  } catch (error) {
    throw withPath(error);
  }
}

/** One AttributeValue (`{ N: "1" }`) to its JS value. */
export function unmarshallValue(
  value: AttributeValue | SdkAttributeValue,
  options?: UnmarshallOptions,
): unknown {
  const num = numberConverter(readOptions(options, 'unmarshallValue').numbers);
  try {
    // A lone value: every binary decoded where it is met, none shared. It is an attribute's
    // value, at level 1.
    const cx = new Conversion(num, false);
    cx.level = 1;
    return convertValue(value as AttributeValue, cx);
  } catch (error) {
    throw withPath(error);
  }
}
