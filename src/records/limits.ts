import { DECODE, toBytes, unpaddedBase64Length } from './binary.js';

// What DynamoDB refuses to store, so no stream record can carry it: the converter (unmarshall)
// and the validator (validate.ts) share these rules, so they agree on what is malformed.

/**
 * Levels of nesting DynamoDB stores: a top-level attribute's value is level 1, the values inside a
 * map or list at level n are at level n + 1, and nothing may sit below level 32.
 */
export const MAX_NESTING_LEVEL = 32;

/** Significant digits an `N` may have. */
const MAX_DIGITS = 38;
/** Powers of ten of the leading digit, inclusive: 1E-130 … 9.99…E+125 (either sign). */
const MIN_MAGNITUDE = -130;
const MAX_MAGNITUDE = 125;

/**
 * The significant digits of a text already known to be number syntax
 * (`[+-]digits[.digits][e[+-]digits]`), and the power of ten of the first ('' and 0 for zero).
 * Off the hot path (a limit's message, a set's duplicate check), so read with a pattern:
 * isValidNumber is the per-value scan.
 */
export function scaleOf(text: string): { digits: string; magnitude: number } {
  const [, int = '', fraction = '', exponent] = /^[+-]?(\d*)(?:\.(\d*))?(?:[eE](.*))?$/.exec(text)!;
  const all = int + fraction;
  const first = all.search(/[1-9]/);
  if (first < 0) return { digits: '', magnitude: 0 };
  // An exponent of any length: Number() of its text is exact far past any limit that matters.
  return {
    digits: all.slice(first).replace(/0+$/, ''),
    magnitude: int.length - first - 1 + (exponent === undefined ? 0 : Number(exponent)),
  };
}

/**
 * Why DynamoDB could not hold this number, or undefined when it can: more than 38 significant
 * digits, or a magnitude outside 1E-130 … 9.99…E+125. `text` is already known to be number syntax.
 */
export function numberLimitProblem(text: string): string | undefined {
  const { digits, magnitude } = scaleOf(text);
  const significant = digits.length;
  if (significant > MAX_DIGITS) {
    return `N has ${significant} significant digits, DynamoDB keeps at most ${MAX_DIGITS}`;
  }
  if (significant > 0 && (magnitude > MAX_MAGNITUDE || magnitude < MIN_MAGNITUDE)) {
    return "N is outside DynamoDB's range (1E-130 to 9.9999999999999999999999999999999999999E+125, either sign)";
  }
  return undefined;
}

/**
 * Whether `text` is DynamoDB number syntax (`[+-]digits[.digits][e[+-]digits]`, or `.digits`)
 * within DynamoDB's limits: numberLimitProblem and the syntax check in one pass, allocating
 * nothing. The validator's test for every `N` that is not a short integer.
 */
export function isValidNumber(text: string): boolean {
  const len = text.length;
  let i = 0;
  let c = len === 0 ? 0 : text.charCodeAt(0);
  if (c === 43 || c === 45) c = ++i < len ? text.charCodeAt(i) : 0;
  let count = 0;
  let point = -1;
  let firstSig = -1;
  let lastSig = -1;
  for (;;) {
    if (c >= 48 && c <= 57) {
      if (c !== 48) {
        if (firstSig < 0) firstSig = count;
        lastSig = count;
      }
      count++;
    } else if (c === 46 && point < 0) point = count;
    else break;
    c = ++i < len ? text.charCodeAt(i) : 0;
  }
  // A mantissa needs a digit ('.', '+' are not numbers).
  if (count === 0) return false;
  let exponent = 0;
  if (i < len) {
    if (c !== 101 && c !== 69) return false;
    c = ++i < len ? text.charCodeAt(i) : 0;
    let negative = false;
    if (c === 43 || c === 45) {
      negative = c === 45;
      c = ++i < len ? text.charCodeAt(i) : 0;
    }
    const start = i;
    // Past any limit that matters a double is exact enough (and Infinity compares as it should).
    while (c >= 48 && c <= 57) {
      exponent = exponent * 10 + (c - 48);
      c = ++i < len ? text.charCodeAt(i) : 0;
    }
    if (i === start || i !== len) return false;
    if (negative) exponent = -exponent;
  }
  if (firstSig < 0) return true;
  if (lastSig - firstSig + 1 > MAX_DIGITS) return false;
  const magnitude = (point < 0 ? count : point) - firstSig - 1 + exponent;
  return magnitude <= MAX_MAGNITUDE && magnitude >= MIN_MAGNITUDE;
}

/** One text per value: `1`, `1.0`, `+1` and `10E-1` share it (DynamoDB compares set members by value). */
function numberKey(text: string): string {
  const { digits, magnitude } = scaleOf(text);
  return digits === '' ? '0' : `${text.charCodeAt(0) === 45 ? '-' : ''}${digits}e${magnitude}`;
}

/** Up to this many members are compared pairwise (no allocation); larger sets go through a Set. */
const PAIRWISE_MAX = 16;

function duplicateByKey<T>(list: readonly T[], key: (member: T) => unknown): number {
  const seen = new Set<unknown>();
  for (let i = 0; i < list.length; i++) {
    const k = key(list[i] as T);
    if (seen.has(k)) return i;
    seen.add(k);
  }
  return -1;
}

/** The index of the first member of an SS equal to an earlier one, or -1. */
export function duplicateStringIndex(list: readonly string[]): number {
  const n = list.length;
  if (n < 2) return -1;
  if (n > PAIRWISE_MAX) return duplicateByKey(list, (s) => s);
  for (let i = 1; i < n; i++) for (let j = 0; j < i; j++) if (list[i] === list[j]) return i;
  return -1;
}

/**
 * A plain decimal written the one way its value prints (`-12.5`, `0`, `7`; not `07`, `1.50`,
 * `+1`, `-0`, `1E3`): of two such texts, equal texts ⇔ equal values.
 */
function isCanonicalPlain(text: string): boolean {
  const len = text.length;
  let i = len !== 0 && text.charCodeAt(0) === 45 ? 1 : 0;
  if (i === len) return false;
  let c = text.charCodeAt(i);
  if (c === 48) {
    if (i + 1 === len) return i === 0; // '0', not '-0'
    if (text.charCodeAt(i + 1) !== 46) return false;
    i++;
  } else {
    if (c < 49 || c > 57) return false;
    while (++i < len) {
      c = text.charCodeAt(i);
      if (c < 48 || c > 57) break;
    }
    if (i === len) return true;
  }
  // At the point: at least one digit after it, the last not 0.
  if (text.charCodeAt(i) !== 46 || i + 1 === len || text.charCodeAt(len - 1) === 48) return false;
  for (let j = i + 1; j < len; j++) {
    c = text.charCodeAt(j);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** The index of the first member of an NS (number texts) equal in value to an earlier one, or -1. */
export function duplicateNumberIndex(list: readonly string[]): number {
  const n = list.length;
  if (n < 2) return -1;
  for (let i = 0; i < n; i++) {
    if (!isCanonicalPlain(list[i] as string)) return duplicateByKey(list, numberKey);
  }
  return duplicateStringIndex(list);
}

/** Bits of the last character that carry data, by unpadded length mod 4 (1 never occurs). */
const LAST_MASK = [63, 0, 48, 60];

/**
 * Whether two valid base64 texts decode to the same bytes (alphabet, padding and unused bits
 * aside). Both passed isBase64, so every character has its 6-bit value in DECODE.
 */
function sameBase64(a: string, b: string): boolean {
  const end = unpaddedBase64Length(a);
  if (end !== unpaddedBase64Length(b)) return false;
  if (end === 0) return true;
  for (let i = 0; i < end - 1; i++) {
    if (DECODE[a.charCodeAt(i)] !== DECODE[b.charCodeAt(i)]) return false;
  }
  const mask = LAST_MASK[end % 4] as number;
  return (
    ((DECODE[a.charCodeAt(end - 1)] as number) & mask) === ((DECODE[b.charCodeAt(end - 1)] as number) & mask)
  );
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function bytesKey(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/** The index of the first decoded BS member equal to an earlier one, or -1. */
export function duplicateBytesIndex(list: readonly Uint8Array[]): number {
  const n = list.length;
  if (n < 2) return -1;
  if (n > PAIRWISE_MAX) return duplicateByKey(list, bytesKey);
  for (let i = 1; i < n; i++) for (let j = 0; j < i; j++) if (sameBytes(list[i]!, list[j]!)) return i;
  return -1;
}

/**
 * The index of the first BS member (base64 texts or Uint8Arrays, already known to be valid, as
 * the validator meets them) equal in bytes to an earlier one, or -1. A few texts are compared by
 * their 6-bit values without decoding; anything else is decoded first.
 */
export function duplicateBinaryIndex(list: readonly unknown[]): number {
  const n = list.length;
  if (n < 2) return -1;
  let texts = n <= PAIRWISE_MAX;
  for (let i = 0; texts && i < n; i++) if (typeof list[i] !== 'string') texts = false;
  if (!texts) return duplicateBytesIndex(list.map(toBytes));
  for (let i = 1; i < n; i++) {
    for (let j = 0; j < i; j++) if (sameBase64(list[i] as string, list[j] as string)) return i;
  }
  return -1;
}
