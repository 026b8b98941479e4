import fc from 'fast-check';

/** A DynamoDB number as a value: sign × mantissa × 10^exponent, well inside DynamoDB's limits. */
export interface NumberValueParts {
  negative: boolean;
  mantissa: bigint;
  exponent: number;
}

export const numberParts: fc.Arbitrary<NumberValueParts> = fc.record({
  negative: fc.boolean(),
  // Small mantissas and exponents too, so that two draws are often equal.
  mantissa: fc.oneof(fc.bigInt({ min: 0n, max: 30n }), fc.bigInt({ min: 0n, max: 10n ** 20n })),
  exponent: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.integer({ min: -60, max: 60 })),
});

/** How one value is written: extra trailing zeros, where the point goes, leading zeros, the exponent's case and sign. */
export const spellingChoices = fc.record({
  zeros: fc.integer({ min: 0, max: 3 }),
  point: fc.nat(30),
  leading: fc.integer({ min: 0, max: 2 }),
  upper: fc.boolean(),
  plus: fc.boolean(),
  plusSign: fc.boolean(),
});

export type Spelling = typeof spellingChoices extends fc.Arbitrary<infer T> ? T : never;

/** One spelling of a value DynamoDB's number syntax accepts. */
export function spell(v: NumberValueParts, c: Spelling): string {
  const digits = (v.mantissa * 10n ** BigInt(c.zeros)).toString();
  const point = c.point % (digits.length + 1);
  const exponent = v.exponent - c.zeros + point;
  const mantissa =
    '0'.repeat(c.leading) +
    (point === 0
      ? digits
      : `${digits.slice(0, digits.length - point)}.${digits.slice(digits.length - point)}`);
  const sign = v.negative ? '-' : c.plusSign ? '+' : '';
  const tail =
    exponent === 0 && c.plus ? '' : `${c.upper ? 'E' : 'e'}${exponent >= 0 && c.plus ? '+' : ''}${exponent}`;
  return `${sign}${mantissa}${tail}`;
}

/** The value's one canonical tuple, computed apart from the code under test: trailing zeros moved to the exponent. */
export function valueKey(v: NumberValueParts): string {
  if (v.mantissa === 0n) return '0';
  let m = v.mantissa;
  let e = v.exponent;
  while (m % 10n === 0n) {
    m /= 10n;
    e++;
  }
  return `${v.negative ? '-' : ''}${m}e${e}`;
}
