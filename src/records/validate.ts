import { isBinary } from './binary.js';
import { isValidNumberText } from './numbers.js';

/**
 * Structural validation of DynamoDB JSON without building anything: true exactly when
 * convertMap / convertValue (unmarshall) would not throw for a structural reason. It mirrors
 * their checks one for one (type-key rule, S, N, B/BS, BOOL, NULL, sets, L, M) so that the
 * pipeline can reject a bad record up front while leaving valid images lazy. A custom number
 * policy function may still throw on first access: that is the policy's own error, not a
 * malformed record.
 *
 * It answers only yes or no. The caller that gets "no" runs the real converter to obtain the
 * error, so reason, detail and path are the converter's by construction.
 */
export function isValidAttributeMap(map: unknown): boolean {
  if (map === null || typeof map !== 'object' || Array.isArray(map)) return false;
  for (const key in map) {
    if (!isValidAttributeValue((map as Record<string, unknown>)[key])) return false;
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

function isValidAttributeValue(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const av = value as Record<string, unknown>;
  switch (typeKey(av)) {
    case 'S':
      return typeof av.S === 'string';
    case 'N':
      return isValidNumberText(av.N);
    case 'M':
      return isValidAttributeMap(av.M);
    case 'L': {
      const list = av.L;
      if (!Array.isArray(list)) return false;
      for (let i = 0; i < list.length; i++) if (!isValidAttributeValue(list[i])) return false;
      return true;
    }
    case 'BOOL':
      return typeof av.BOOL === 'boolean';
    case 'NULL':
      return av.NULL === true;
    case 'SS': {
      const list = av.SS;
      if (!Array.isArray(list)) return false;
      for (let i = 0; i < list.length; i++) if (typeof list[i] !== 'string') return false;
      return true;
    }
    case 'NS': {
      const list = av.NS;
      if (!Array.isArray(list)) return false;
      for (let i = 0; i < list.length; i++) if (!isValidNumberText(list[i])) return false;
      return true;
    }
    case 'B':
      return isBinary(av.B);
    case 'BS': {
      const list = av.BS;
      if (!Array.isArray(list)) return false;
      for (let i = 0; i < list.length; i++) if (!isBinary(list[i])) return false;
      return true;
    }
    default:
      return false;
  }
}
