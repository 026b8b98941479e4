import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidAttributeValueError } from '../../../src/records/errors.js';
import { canonicalNumberText } from '../../../src/records/number-canonical.js';
import { isValidNumberText } from '../../../src/records/numbers.js';
import { numberParts, spell, spellingChoices, valueKey } from '../../support/number-spellings.js';

describe('canonicalNumberText', () => {
  it('gives one text for the spellings of one value', () => {
    for (const text of ['1.5', '1.50', '15E-1', '0.15e1', '+1.5', '001.500', '.15E+1', '150e-2'])
      expect(canonicalNumberText(text), text).toBe('1.5');
    for (const text of ['0', '-0', '0.000', '0E+99', '-0.0e-5', '+0'])
      expect(canonicalNumberText(text), text).toBe('0');
    expect(canonicalNumberText('1E+3')).toBe('1000');
    expect(canonicalNumberText('-1.2300E-5')).toBe('-0.000012300'.replace(/0+$/, ''));
    expect(canonicalNumberText('1E-130')).toBe(`0.${'0'.repeat(129)}1`);
    expect(canonicalNumberText('9.9999999999999999999999999999999999999E+125')).toBe(
      `${'9'.repeat(38)}${'0'.repeat(88)}`,
    );
  });

  it('leaves the stored form (what DynamoDB returns) as it is', () => {
    for (const text of ['0', '7', '-42', '1.5', '-0.000123', '12345678901234567890123456789012345678'])
      expect(canonicalNumberText(text)).toBe(text);
  });

  it('property: equal values, however spelled, give one text; different values different texts', () => {
    fc.assert(
      fc.property(numberParts, numberParts, spellingChoices, spellingChoices, (a, b, sa, sb) => {
        const ta = spell(a, sa);
        const tb = spell(b, sb);
        const ca = canonicalNumberText(ta);
        // Another spelling of the same value, and a value drawn apart.
        expect(canonicalNumberText(spell(a, sb))).toBe(ca);
        expect(ca === canonicalNumberText(tb)).toBe(valueKey(a) === valueKey(b));
        // The canonical text is itself a number of the same value, and canonical.
        expect(isValidNumberText(ca)).toBe(true);
        expect(canonicalNumberText(ca)).toBe(ca);
        expect(Number(ca) === Number(ta)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses what DynamoDB could not hold, in bounded time, with a typed error naming no digits', () => {
    for (const text of ['', 'abc', '1e', '1E+999999999', `1${'0'.repeat(100_000)}`, 'NaN', '1.5.5', '0x10']) {
      let thrown: unknown;
      try {
        canonicalNumberText(text);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, text.slice(0, 20)).toBeInstanceOf(InvalidAttributeValueError);
      expect((thrown as Error).message).not.toContain('999');
    }
    expect(() => canonicalNumberText(5 as never)).toThrow(InvalidAttributeValueError);
  });
});
