import { InvalidAttributeValueError, InvalidOptionsError } from './errors.js';
import { isCanonicalInteger, isNumberText } from './number-text.js';
import { NumberValue } from './number-value.js';

/**
 * How `N` values become JavaScript values.
 * - `'exact'` (default): a safe integer or a decimal whose text round-trips through a double
 *   becomes a `number`; any other integer a `bigint`; anything else a `NumberValue` with the
 *   exact text. `marshall` writes each back to the identical `N` text.
 * - `'string'`: the text itself.
 * - `'number'`: `Number(text)`, rounding when it must (never throws, unlike util-dynamodb).
 * - a function: called with the text (already checked to be a number).
 */
export type NumberPolicy = 'exact' | 'string' | 'number' | ((text: string) => unknown);

export type NumberConverter = (text: string) => unknown;

function invalidNumber(text: unknown): InvalidAttributeValueError {
  return new InvalidAttributeValueError(
    'invalid-number',
    `N must be a decimal number string, got ${typeof text === 'string' ? JSON.stringify(text) : typeof text}`,
  );
}

/**
 * True for short canonical integers ("0", "-42", "12345"), which are the common case and always
 * safe and round-tripping: skips String(Number(text)), the costliest step of the general path.
 */
function isShortCanonicalInteger(text: string): boolean {
  const len = text.length;
  if (len === 0 || len > 15) return false;
  let i = text.charCodeAt(0) === 45 ? 1 : 0;
  if (i === len) return false;
  const first = text.charCodeAt(i);
  if (first === 48) return len === 1;
  if (first < 49 || first > 57) return false;
  for (i++; i < len; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * True for plain decimals ("12.5", "-0.000123") whose text a double reproduces exactly:
 * at most 15 significant digits (every such decimal maps to a distinct double, so the shortest
 * round-trip printing is the text itself), no redundant zeros, and magnitude ≥ 1e-6 (below it
 * JS prints exponent notation). Avoids String(number), the slowest step, for the common case.
 */
function isRoundTripDecimal(text: string): boolean {
  const len = text.length;
  let i = text.charCodeAt(0) === 45 ? 1 : 0;
  const intStart = i;
  while (i < len) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) break;
    i++;
  }
  const intDigits = i - intStart;
  if (intDigits === 0 || i === len || text.charCodeAt(i) !== 46) return false;
  const zeroInt = intDigits === 1 && text.charCodeAt(intStart) === 48;
  if (!zeroInt && text.charCodeAt(intStart) === 48) return false;
  const fracStart = ++i;
  let leadingZeros = 0;
  let counting = zeroInt;
  while (i < len) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
    if (counting) {
      if (c === 48) leadingZeros++;
      else counting = false;
    }
    i++;
  }
  const fracDigits = len - fracStart;
  if (fracDigits === 0 || text.charCodeAt(len - 1) === 48) return false;
  if (zeroInt) return leadingZeros <= 5 && fracDigits - leadingZeros <= 15;
  return intDigits + fracDigits <= 15;
}

export function exactNumber(text: string): number | bigint | NumberValue {
  if (typeof text !== 'string') throw invalidNumber(text);
  if (isShortCanonicalInteger(text) || isRoundTripDecimal(text)) return +text;
  const n = +text;
  // Unsafe integers that happen to print back identically (1e20 as "100000000000000000000")
  // still become bigint: arithmetic on them as doubles would be silently wrong.
  if (Number.isFinite(n) && String(n) === text && (!Number.isInteger(n) || Number.isSafeInteger(n))) return n;
  if (isCanonicalInteger(text)) return BigInt(text);
  if (!isNumberText(text)) throw invalidNumber(text);
  return new NumberValue(text);
}

/**
 * Whether every number policy accepts the `N` text (exactNumber throws exactly when this is
 * false: each of its fast paths only admits DynamoDB number syntax).
 */
export function isValidNumberText(text: unknown): boolean {
  return typeof text === 'string' && (isShortCanonicalInteger(text) || isNumberText(text));
}

function checkedText(text: string): string {
  if (typeof text !== 'string' || !(isShortCanonicalInteger(text) || isNumberText(text)))
    throw invalidNumber(text);
  return text;
}

function lossyNumber(text: string): number {
  return +checkedText(text);
}

export function numberConverter(policy: NumberPolicy | undefined, where: string): NumberConverter {
  if (policy === undefined || policy === 'exact') return exactNumber;
  if (policy === 'string') return checkedText;
  if (policy === 'number') return lossyNumber;
  if (typeof policy === 'function') return (text) => policy(checkedText(text));
  throw new InvalidOptionsError(
    `${where}: option 'numbers' must be 'exact', 'string', 'number' or a function, got ${JSON.stringify(policy)}`,
  );
}
