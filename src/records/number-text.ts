// DynamoDB's number syntax, as the regular expression /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/:
// optional sign, digits with an optional fraction (or a bare fraction), optional exponent.
// Scanned by hand: these run on every N that leaves the fast path (numbers.ts) and on every
// N and NS member `validate: true` checks, where a regex call costs several times the scan.

/** Index after the run of ASCII digits starting at `i`. */
function digitsEnd(text: string, i: number): number {
  const len = text.length;
  while (i < len) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) break;
    i++;
  }
  return i;
}

export function isNumberText(text: string): boolean {
  const len = text.length;
  let i = 0;
  if (len === 0) return false;
  let c = text.charCodeAt(0);
  if (c === 43 || c === 45) i = 1; // '+' '-'
  const intEnd = digitsEnd(text, i);
  let mantissaDigits = intEnd - i;
  i = intEnd;
  if (i < len && text.charCodeAt(i) === 46) {
    const fracEnd = digitsEnd(text, i + 1);
    mantissaDigits += fracEnd - i - 1;
    i = fracEnd;
  }
  if (mantissaDigits === 0) return false;
  if (i === len) return true;
  c = text.charCodeAt(i);
  if (c !== 69 && c !== 101) return false; // 'E' 'e'
  i++;
  if (i < len) {
    c = text.charCodeAt(i);
    if (c === 43 || c === 45) i++;
  }
  const expEnd = digitsEnd(text, i);
  return expEnd > i && expEnd === len;
}

/** Integers whose canonical bigint text is the text itself (no leading zeros, no "-0", no "+"). */
export function isCanonicalInteger(text: string): boolean {
  const len = text.length;
  const i = len !== 0 && text.charCodeAt(0) === 45 ? 1 : 0;
  if (i === len) return false;
  const first = text.charCodeAt(i);
  return first >= 49 && first <= 57 && digitsEnd(text, i + 1) === len;
}
