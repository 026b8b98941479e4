/** Shape checks both record parsers (stream and Kinesis) make. */

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Decimal digits only, 1 to `maxDigits` of them: a sequence number of either source. */
export function isSequenceNumber(text: string, maxDigits: number): boolean {
  const len = text.length;
  if (len === 0 || len > maxDigits) return false;
  for (let i = 0; i < len; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
