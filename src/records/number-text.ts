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
