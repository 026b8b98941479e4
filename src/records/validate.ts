import { isBinary } from './binary.js';
import { InvalidAttributeValueError, type MalformedRecordError } from './errors.js';
import {
  duplicateBinaryIndex,
  duplicateNumberIndex,
  duplicateStringIndex,
  MAX_NESTING_LEVEL,
} from './limits.js';
import { exactNumber, isValidNumberText } from './numbers.js';
import { type MapName, malformedImage } from './stream-record.js';
import type { AttributeMap, ClassifiedRecord } from './types.js';
import { convertImage, imageConversion, isEmptyMap } from './unmarshall.js';

/**
 * Structural validation of DynamoDB JSON without building anything: true exactly when
 * convertMap / convertValue (unmarshall) would not throw for a structural reason. It mirrors
 * their checks one for one (type-key rule, S, N, B/BS, BOOL, NULL, sets, L, M, and DynamoDB's
 * limits: 32 levels of nesting, numbers' range and precision, no empty set, no member twice) so
 * that the pipeline can reject a bad record up front while leaving valid images lazy. A custom
 * number policy function may still throw on first access: that is the policy's own error, not a
 * malformed record. It never goes deeper than level 32, so no image is too deep for it.
 *
 * It answers only yes or no. The caller that gets "no" runs the real converter to obtain the
 * error, so reason, detail and path are the converter's by construction. It allocates nothing
 * but to compare the members of a set of more than 16, of a number set written with exponents
 * or trailing zeros, or of a binary set given as bytes.
 */
export function isValidAttributeMap(map: unknown): boolean {
  return isValidMapAt(map, 1);
}

/** A map whose values are at nesting level `level`. */
function isValidMapAt(map: unknown, level: number): boolean {
  if (map === null || typeof map !== 'object' || Array.isArray(map)) return false;
  // Too deep for any attribute, but an empty map holds none: the converter accepts it there too.
  if (level > MAX_NESTING_LEVEL) return isEmptyMap(map);
  for (const key in map) {
    if (!isValidAttributeValue((map as Record<string, unknown>)[key], level)) return false;
  }
  return true;
}

/** The type key convertValue would pick (see soleDefinedKey), '' for none, null for several. */
function typeKey(av: Record<string, unknown>): string | null {
  let first: string | undefined;
  let more = false;
  for (const key in av) {
    if (first === undefined) first = key;
    else {
      more = true;
      break;
    }
  }
  if (first === undefined) return '';
  if (!more) return first;
  // Several keys: SDK-built values may carry type keys whose value is undefined; those do not count.
  let type: string | undefined;
  for (const key in av) {
    if (av[key] === undefined) continue;
    if (type !== undefined) return null;
    type = key;
  }
  return type ?? '';
}

function isValidAttributeValue(value: unknown, level: number): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const av = value as Record<string, unknown>;
  switch (typeKey(av)) {
    case 'S':
      return typeof av.S === 'string';
    case 'N':
      return isValidNumberText(av.N);
    case 'M':
      return isValidMapAt(av.M, level + 1);
    case 'L': {
      const list = av.L;
      if (!Array.isArray(list)) return false;
      if (list.length > 0 && level >= MAX_NESTING_LEVEL) return false;
      for (let i = 0; i < list.length; i++) if (!isValidAttributeValue(list[i], level + 1)) return false;
      return true;
    }
    case 'BOOL':
      return typeof av.BOOL === 'boolean';
    case 'NULL':
      return av.NULL === true;
    case 'SS': {
      const list = av.SS;
      if (!Array.isArray(list) || list.length === 0) return false;
      for (let i = 0; i < list.length; i++) if (typeof list[i] !== 'string') return false;
      return duplicateStringIndex(list) < 0;
    }
    case 'NS': {
      const list = av.NS;
      if (!Array.isArray(list) || list.length === 0) return false;
      for (let i = 0; i < list.length; i++) if (!isValidNumberText(list[i])) return false;
      return duplicateNumberIndex(list) < 0;
    }
    case 'B':
      return isBinary(av.B);
    case 'BS': {
      const list = av.BS;
      if (!Array.isArray(list) || list.length === 0) return false;
      for (let i = 0; i < list.length; i++) if (!isBinary(list[i])) return false;
      return duplicateBinaryIndex(list) < 0;
    }
    default:
      return false;
  }
}

/**
 * Whether a record's keys and images are ones DynamoDB could have sent, read from `raw` (what an
 * archive writes): undefined when they are, else the MalformedRecordError their getters throw
 * (reason, detail, path). What the pipeline checks for a sink that takes `checkedImages`.
 */
export function recordImageError(record: ClassifiedRecord): MalformedRecordError | undefined {
  const d = record.raw.dynamodb;
  if (
    isValidAttributeMap(d.Keys) &&
    (d.NewImage === undefined || isValidAttributeMap(d.NewImage)) &&
    (d.OldImage === undefined || isValidAttributeMap(d.OldImage))
  ) {
    return undefined;
  }
  return (
    imageError(record, d.Keys, 'Keys') ??
    imageError(record, d.NewImage, 'NewImage') ??
    imageError(record, d.OldImage, 'OldImage')
  );
}

/** The converter's error for one map (with its path), or undefined when it converts. */
function imageError(
  record: ClassifiedRecord,
  map: AttributeMap | undefined,
  name: MapName,
): MalformedRecordError | undefined {
  if (map === undefined) return undefined;
  try {
    convertImage(map, imageConversion(exactNumber));
    return undefined;
  } catch (error) {
    if (error instanceof InvalidAttributeValueError) return malformedImage(error, record, name);
    throw error;
  }
}
