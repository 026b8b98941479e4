// DynamoDB's number syntax: optional sign, digits with an optional fraction, optional exponent.
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
// Integers whose canonical bigint text is the text itself (no leading zeros, no "-0", no "+").
const CANONICAL_INTEGER = /^-?[1-9]\d*$/;

export function isNumberText(text: string): boolean {
  return DECIMAL.test(text);
}

export function isCanonicalInteger(text: string): boolean {
  return CANONICAL_INTEGER.test(text);
}

/**
 * A bad value as its length, never its text: it is item data (an id, an email) and error
 * messages reach logs that image redaction does not cover.
 */
export function describeText(text: string): string {
  return `a string of ${text.length} characters`;
}
