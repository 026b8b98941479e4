import { InvalidAttributeValueError } from './errors.js';
import { scaleOf } from './limits.js';
import { describeText } from './number-text.js';
import { isValidNumberText } from './numbers.js';

/**
 * Plain decimals already in canonical form: no sign but `-`, no leading zero but a lone `0.`,
 * no trailing fraction zero, no exponent. (`-0` matches too and is handled first.)
 */
const CANONICAL_DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d*[1-9])?$/;

/**
 * The one spelling of a DynamoDB number's value: `1.50`, `15E-1`, `0.15e1` and `+1.5` are all
 * `1.5`, `-0` is `0`, `1E+3` is `1000`. A plain decimal without exponent, sign only when negative,
 * no leading or trailing zeros: the form DynamoDB itself returns a stored number in, so a key read
 * back from a table, an export or an INSERT keeps its text, and only a number spelled otherwise
 * (DynamoDB Local's MODIFY carries the key as the request wrote it) is rewritten. Bounded: the
 * text must be a number DynamoDB can hold (38 digits, 1E-130 … 9.99…E+125), so the result has at
 * most 133 characters. Anything else is an InvalidAttributeValueError.
 */
export function canonicalNumberText(text: string): string {
  if (!isValidNumberText(text)) {
    throw new InvalidAttributeValueError(
      'invalid-number',
      `N must be a number DynamoDB can hold, got ${typeof text === 'string' ? describeText(text) : typeof text}`,
    );
  }
  // The common case (the stored form itself) costs one pattern test and allocates nothing.
  if (CANONICAL_DECIMAL.test(text) && text !== '-0') return text;
  const { digits, magnitude } = scaleOf(text);
  if (digits === '') return '0';
  const sign = text.charCodeAt(0) === 45 ? '-' : '';
  // digits[0] stands at 10^magnitude.
  if (magnitude >= digits.length - 1) return `${sign}${digits}${'0'.repeat(magnitude - digits.length + 1)}`;
  if (magnitude >= 0) return `${sign}${digits.slice(0, magnitude + 1)}.${digits.slice(magnitude + 1)}`;
  return `${sign}0.${'0'.repeat(-magnitude - 1)}${digits}`;
}
