import { InvalidAttributeValueError } from './errors.js';
import { isValidNumber, numberLimitProblem } from './limits.js';
import { describeText, isCanonicalInteger, isNumberText } from './number-text.js';
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
    `N must be a decimal number string, got ${typeof text === 'string' ? describeText(text) : typeof text}`,
  );
}

/** Why a text isValidNumber refused was refused: its syntax, or DynamoDB's limits. */
function numberError(text: string): InvalidAttributeValueError {
  if (!isNumberText(text)) return invalidNumber(text);
  return new InvalidAttributeValueError(
    'number-out-of-range',
    numberLimitProblem(text) ?? 'N is out of range',
  );
}

/**
 * Powers of ten a double holds exactly (10^22 is the last), computed: `10 ** i` is exact up to
 * there, and the array has the literal's packed-double elements.
 */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

/**
 * The exact policy, in one left-to-right pass for the forms items carry almost always:
 *
 * - a canonical integer of at most 15 digits ("0", "-42", "1767225600") is a safe integer;
 * - a plain decimal of at most 15 significant digits, no redundant zeros and magnitude ≥ 1e-6
 *   ("12.5", "-0.000123") is the double whose shortest printing is the text itself (every such
 *   decimal maps to a distinct double), so it becomes a number;
 * - an integer of 17 to 38 digits is never safe: a bigint, without a detour through a double;
 * - a plain decimal ending in 0 ("1.50") never prints back as itself: a NumberValue.
 *
 * The digits are accumulated as they are checked. The value of a decimal is then m / 10^f with
 * m < 2^53 and f ≤ 20: both exact in a double, so the one division is correctly rounded — the
 * same double as `+text` (Clinger's fast path), without the runtime call and with no string
 * built to compare. Every other form (exponents, "+5", "007", "-0", ".5", 16-digit integers,
 * long decimals) takes generalNumber, the definition itself. The fast paths only admit numbers
 * well inside DynamoDB's range and precision; generalNumber checks them (numberLimitProblem).
 */
export function exactNumber(text: string): number | bigint | NumberValue {
  if (typeof text !== 'string') throw invalidNumber(text);
  const len = text.length;
  const start = len !== 0 && text.charCodeAt(0) === 45 ? 1 : 0;
  let i = start;
  let m = 0;
  let c = 0;
  while (i < len) {
    c = text.charCodeAt(i);
    if (c < 48 || c > 57) break;
    m = m * 10 + (c - 48);
    i++;
  }
  const intDigits = i - start;
  if (intDigits === 0) return generalNumber(text);
  const zeroInt = text.charCodeAt(start) === 48;
  if (i === len) {
    if (zeroInt) return intDigits === 1 && start === 0 ? 0 : generalNumber(text);
    if (intDigits <= 15) return start === 0 ? m : -m;
    return intDigits >= 17 && intDigits <= 38 ? BigInt(text) : generalNumber(text);
  }
  if (c !== 46 || (zeroInt && intDigits > 1)) return generalNumber(text);
  const fracStart = ++i;
  // After "0.", the zeros before the first significant digit.
  let leadingZeros = 0;
  while (i < len) {
    c = text.charCodeAt(i);
    if (c < 48 || c > 57) return generalNumber(text);
    if (m === 0 && c === 48) leadingZeros++;
    m = m * 10 + (c - 48);
    i++;
  }
  const fracDigits = len - fracStart;
  if (fracDigits === 0) return generalNumber(text);
  // Trailing zero: never the double's own printing. Up to 38 digits it is plain and in range.
  if (c === 48) return intDigits + fracDigits <= 38 ? new NumberValue(text) : generalNumber(text);
  const significant = zeroInt ? fracDigits - leadingZeros : intDigits + fracDigits;
  if (significant > 15 || leadingZeros > 5) return generalNumber(text);
  const value = m / (POW10[fracDigits] as number);
  return start === 0 ? value : -value;
}

/**
 * The exact policy as defined: a number when the text is what the double prints (and, for an
 * integer, the double is safe: 1e20 printed in full still becomes a bigint, since arithmetic on
 * it as a double would be silently wrong), else a bigint for a canonical integer, else a
 * NumberValue; an error for anything that is not DynamoDB number syntax or that DynamoDB could
 * not hold (more than 38 significant digits, magnitude outside 1E-130 … 9.99…E+125).
 */
function generalNumber(text: string): number | bigint | NumberValue {
  if (!isValidNumber(text)) throw numberError(text);
  const n = +text;
  if (Number.isFinite(n) && String(n) === text && (!Number.isInteger(n) || Number.isSafeInteger(n))) return n;
  if (isCanonicalInteger(text)) return BigInt(text);
  return new NumberValue(text);
}

/**
 * True for short canonical integers ("0", "-42", "12345"), the common case: checked in a few
 * characters, without isValidNumber's general scan (fractions, exponents, DynamoDB's limits).
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
 * Whether every number policy accepts the `N` text (exactNumber throws exactly when this is
 * false: each of its fast paths only admits DynamoDB number syntax within DynamoDB's limits).
 */
export function isValidNumberText(text: unknown): boolean {
  return typeof text === 'string' && (isShortCanonicalInteger(text) || isValidNumber(text));
}

function checkedText(text: string): string {
  if (!isValidNumberText(text)) throw typeof text === 'string' ? numberError(text) : invalidNumber(text);
  return text;
}

function lossyNumber(text: string): number {
  return +checkedText(text);
}

/** The `numbers` option's rule (core/options), shared by unmarshall and the parser. */
export const NUMBERS_OPTION = {
  kind: 'custom',
  expected: "'exact', 'string', 'number' or a function",
  check: (v: unknown) => v === 'exact' || v === 'string' || v === 'number' || typeof v === 'function',
} as const;

/** The converter of a policy NUMBERS_OPTION accepted. */
export function numberConverter(policy: NumberPolicy | undefined): NumberConverter {
  if (policy === 'string') return checkedText;
  if (policy === 'number') return lossyNumber;
  if (typeof policy === 'function') return (text) => policy(checkedText(text));
  return exactNumber;
}
