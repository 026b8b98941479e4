import { expectArray, InvalidPatternError } from './errors.js';

/**
 * event-ruler compares numbers as fixed-point values: at most six decimal places, within
 * ±5,000,000,000 (its ComparableNumber). A pattern operand outside that is refused; an event value
 * outside it never satisfies a numeric condition. Scaling to integer micro-units keeps the
 * comparison exact (0.1 + 0.2 style drift cannot flip a boundary) and allocation-free.
 */
export const NUMERIC_LIMIT = 5e9;
const SCALE = 1e6;

/** `n` in micro-units, or NaN when event-ruler could not represent it. */
export function toMicros(n: number): number {
  if (!Number.isFinite(n) || n < -NUMERIC_LIMIT || n > NUMERIC_LIMIT) return Number.NaN;
  // Above 2^32 the product n × 10^6 is itself rounded (to halves), so Math.round can land one
  // micro-unit off and a value with six decimals would look like it had more. The true micro-unit
  // count is within one of the estimate; the one whose quotient is exactly n is it (in this range
  // consecutive micro-units map to distinct doubles, so at most one can).
  const estimate = Math.round(n * SCALE);
  if (estimate / SCALE === n) return estimate;
  if ((estimate - 1) / SCALE === n) return estimate - 1;
  if ((estimate + 1) / SCALE === n) return estimate + 1;
  // More than six decimals: event-ruler refuses the conversion, so the value matches nothing.
  return Number.NaN;
}

export function operandMicros(value: unknown, path: string, what: string): number {
  if (typeof value !== 'number') {
    throw new InvalidPatternError(
      'invalid-numeric',
      path,
      `${what} must be a number, got ${JSON.stringify(value)}`,
    );
  }
  const micros = toMicros(value);
  if (Number.isNaN(micros)) {
    throw new InvalidPatternError(
      'invalid-numeric',
      path,
      `${value} is outside what numeric matching supports (between -5e9 and 5e9, at most 6 decimal places)`,
    );
  }
  return micros;
}

/** A compiled numeric range over micro-units; both ends always present, as in event-ruler. */
export interface NumericRange {
  readonly bottom: number;
  readonly openBottom: boolean;
  readonly top: number;
  readonly openTop: boolean;
}

const LOWER = '>';
const LOWER_EQ = '>=';
const UPPER = '<';
const UPPER_EQ = '<=';
const EQUALS = '=';

/**
 * Parses `["=", 300]`, `[">", 0]`, `[">", 0, "<=", 5]`, `["<", 10]`. A lower bound must come first
 * and an upper bound second; the range must not be empty (event-ruler: "Bottom must be less than top").
 */
export function parseNumericRange(operand: unknown, path: string): NumericRange {
  expectArray(operand, 'invalid-numeric', path, 'numeric takes an array such as [">", 0, "<=", 5]');
  const at = (i: number) => `${path}[${i}]`;
  const op = operand[0];
  if (typeof op !== 'string') {
    throw new InvalidPatternError(
      'invalid-numeric',
      at(0),
      `expected an operator (=, <, <=, >, >=), got ${JSON.stringify(op)}`,
    );
  }
  if (operand.length < 2) {
    throw new InvalidPatternError('invalid-numeric', path, `operator "${op}" needs a number after it`);
  }
  const first = operandMicros(operand[1], at(1), `the value of "${op}"`);
  switch (op) {
    case EQUALS:
      if (operand.length !== 2) throw tooMany(path);
      return { bottom: first, openBottom: false, top: first, openTop: false };
    case UPPER:
    case UPPER_EQ:
      if (operand.length !== 2) {
        throw new InvalidPatternError(
          'invalid-numeric',
          at(2),
          `an upper bound ("${op}") must come last: write the lower bound first, e.g. [">", 0, "${op}", ${operand[1]}]`,
        );
      }
      return range(-NUMERIC_LIMIT * SCALE, false, first, op === UPPER, path);
    case LOWER:
    case LOWER_EQ: {
      if (operand.length === 2) return range(first, op === LOWER, NUMERIC_LIMIT * SCALE, false, path);
      if (operand.length !== 4) throw tooMany(path);
      const op2 = operand[2];
      if (op2 !== UPPER && op2 !== UPPER_EQ) {
        throw new InvalidPatternError(
          'invalid-numeric',
          at(2),
          `after a lower bound only "<" or "<=" may follow, got ${JSON.stringify(op2)}`,
        );
      }
      const second = operandMicros(operand[3], at(3), `the value of "${op2}"`);
      return range(first, op === LOWER, second, op2 === UPPER, path);
    }
    default:
      throw new InvalidPatternError(
        'invalid-numeric',
        at(0),
        `unknown numeric operator ${JSON.stringify(op)} (use =, <, <=, >, >=)`,
      );
  }
}

function range(
  bottom: number,
  openBottom: boolean,
  top: number,
  openTop: boolean,
  path: string,
): NumericRange {
  if (bottom >= top) {
    throw new InvalidPatternError(
      'invalid-numeric',
      path,
      `empty range: the lower bound ${bottom / SCALE} must be below the upper bound ${top / SCALE}`,
    );
  }
  return { bottom, openBottom, top, openTop };
}

function tooMany(path: string): InvalidPatternError {
  return new InvalidPatternError('invalid-numeric', path, 'too many elements in the numeric expression');
}

export function inRange(r: NumericRange, micros: number): boolean {
  // NaN fails every comparison, so unrepresentable event values never match.
  return (
    (r.openBottom ? micros > r.bottom : micros >= r.bottom) && (r.openTop ? micros < r.top : micros <= r.top)
  );
}
