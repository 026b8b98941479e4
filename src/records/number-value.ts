import { InvalidAttributeValueError } from './errors.js';
import { describeText, isNumberText } from './number-text.js';

/**
 * An exact DynamoDB number: the decimal text exactly as DynamoDB stores it (up to 38 significant
 * digits, 1E-130 … 9.99E+125), for values a JS `number` or `bigint` cannot hold without loss.
 * `marshall` writes `value` back unchanged.
 */
export class NumberValue {
  /**
   * Keeps the map of a constructed NumberValue alive across full GCs, so code optimized for
   * NumberValues is not discarded when an event's all die (see StreamRecord's #shapeAnchor).
   */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the instance map alive
  static readonly #shapeAnchor = new NumberValue('0');

  readonly value: string;

  constructor(value: string | number | bigint) {
    const text = typeof value === 'string' ? value : String(value);
    if (!isNumberText(text)) {
      throw new InvalidAttributeValueError('invalid-number', `not a number: ${describeText(text)}`);
    }
    this.value = text;
  }

  toString(): string {
    return this.value;
  }

  /** JSON keeps the digits: a string, never a rounded number. */
  toJSON(): string {
    return this.value;
  }

  /** The nearest double; lossy by design, for callers who accept it. */
  toNumber(): number {
    return Number(this.value);
  }

  /** Exact when the value is an integer (e.g. `1E+3`), else a RangeError from BigInt. */
  toBigInt(): bigint {
    const text = this.value;
    if (/^[+-]?\d+$/.test(text)) return BigInt(text);
    const m = /^([+-]?)(\d*)(?:\.(\d*))?[eE]([+-]?\d+)$/.exec(text) ?? /^([+-]?)(\d*)\.(\d*)()$/.exec(text);
    if (m) {
      const [, sign, int = '', frac = '', expText] = m;
      const exp = expText ? Number(expText) : 0;
      const digits = int + frac;
      const shift = exp - frac.length;
      if (shift >= 0) return BigInt(`${sign}${digits || '0'}${'0'.repeat(shift)}`);
      const kept = digits.slice(0, digits.length + shift);
      if (/^0*$/.test(digits.slice(digits.length + shift))) return BigInt(`${sign}${kept || '0'}`);
    }
    throw new RangeError(`${text} is not an integer`);
  }

  get [Symbol.toStringTag](): string {
    return 'NumberValue';
  }
}
