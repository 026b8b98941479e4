import { compileCidr } from './cidr.js';
import { expectArray, InvalidPatternError } from './errors.js';
import { inRange, operandMicros, parseNumericRange, toMicros } from './numeric.js';
import { childPath, indexPath } from './path.js';
import { compileWildcard } from './wildcard.js';

/**
 * One field's condition list, compiled. Exact literals go into sets (one lookup per event value);
 * every operator becomes a predicate over a single leaf value. `exists` is kept apart because it is
 * about whether the path has any leaf at all, not about a value.
 */
export interface LeafMatcher {
  /** Some condition (`exists: true`) is satisfied by any leaf. */
  readonly anyLeaf: boolean;
  /** Some condition (`exists: false`) is satisfied when the path has no leaf. */
  readonly noLeaf: boolean;
  /** True if the leaf value satisfies a value condition. */
  readonly test: (value: unknown) => boolean;
  /** Whether the list has any condition other than `exists: false` (so it can bind an array element). */
  readonly positive: boolean;
}

type Predicate = (value: unknown) => boolean;

export const OPERATORS = [
  'prefix',
  'suffix',
  'equals-ignore-case',
  'anything-but',
  'numeric',
  'exists',
  'wildcard',
  'cidr',
  'exactly',
] as const;

export function compileConditionList(list: unknown, path: string): LeafMatcher {
  expectArray(list, 'not-an-array', path, 'a field must be an object or an array of conditions');
  if (list.length === 0) {
    throw new InvalidPatternError(
      'empty-array',
      path,
      'empty condition lists are not allowed (they would match nothing)',
    );
  }
  const strings = new Set<string>();
  const numbers = new Set<number>();
  let trueOk = false;
  let falseOk = false;
  let nullOk = false;
  let anyLeaf = false;
  let noLeaf = false;
  const predicates: Predicate[] = [];

  list.forEach((condition: unknown, i) => {
    const at = indexPath(path, i);
    if (typeof condition === 'string') strings.add(condition);
    else if (typeof condition === 'number') {
      if (!Number.isFinite(condition))
        throw new InvalidPatternError('invalid-value', at, `${condition} is not a JSON number`);
      numbers.add(condition);
    } else if (condition === true) trueOk = true;
    else if (condition === false) falseOk = true;
    else if (condition === null) nullOk = true;
    else if (typeof condition === 'object' && !Array.isArray(condition)) {
      const keys = Object.keys(condition);
      if (keys.length !== 1) {
        throw new InvalidPatternError(
          keys.length === 0 ? 'unknown-operator' : 'invalid-operand',
          at,
          keys.length === 0
            ? 'an operator object needs exactly one operator'
            : `only one operator per object, got ${keys.join(', ')}`,
        );
      }
      const op = keys[0] as string;
      const operand = (condition as Record<string, unknown>)[op];
      const opPath = childPath(at, op);
      switch (op) {
        case 'exists':
          if (operand === true) anyLeaf = true;
          else if (operand === false) noLeaf = true;
          else throw new InvalidPatternError('invalid-operand', opPath, 'exists takes true or false');
          break;
        case 'exactly':
          strings.add(stringOperand(operand, opPath, op));
          break;
        default:
          predicates.push(compileOperator(op, operand, opPath, at));
      }
    } else {
      throw new InvalidPatternError(
        'invalid-value',
        at,
        `a condition must be a string, number, true, false, null or an operator object, got ${Array.isArray(condition) ? 'an array' : typeof condition}`,
      );
    }
  });

  const hasStrings = strings.size > 0;
  const hasNumbers = numbers.size > 0;
  const positive =
    hasStrings || hasNumbers || trueOk || falseOk || nullOk || anyLeaf || predicates.length > 0;
  const onlyStrings = !hasNumbers && !trueOk && !falseOk && !nullOk && predicates.length === 0;
  // The common shapes get a dedicated closure: one string, a set of strings, a single operator.
  if (onlyStrings && strings.size === 1) {
    const only = strings.values().next().value as string;
    return { anyLeaf, noLeaf, test: (value) => value === only, positive };
  }
  if (onlyStrings && hasStrings) {
    return { anyLeaf, noLeaf, test: (value) => typeof value === 'string' && strings.has(value), positive };
  }
  if (!hasStrings && !hasNumbers && !trueOk && !falseOk && !nullOk && predicates.length === 1) {
    return { anyLeaf, noLeaf, test: predicates[0] as Predicate, positive };
  }
  const test: Predicate = (value) => {
    switch (typeof value) {
      case 'string':
        if (hasStrings && strings.has(value)) return true;
        break;
      case 'number':
        if (hasNumbers && numbers.has(value)) return true;
        break;
      case 'boolean':
        if (value ? trueOk : falseOk) return true;
        break;
      default:
        if (value === null && nullOk) return true;
    }
    for (let i = 0; i < predicates.length; i++) if ((predicates[i] as Predicate)(value)) return true;
    return false;
  };
  return { anyLeaf, noLeaf, test, positive };
}

function compileOperator(op: string, operand: unknown, opPath: string, at: string): Predicate {
  switch (op) {
    case 'prefix':
    case 'suffix': {
      const fromStart = op === 'prefix';
      if (operand !== null && typeof operand === 'object' && !Array.isArray(operand)) {
        const keys = Object.keys(operand);
        if (keys.length !== 1 || keys[0] !== 'equals-ignore-case') {
          throw new InvalidPatternError(
            'unknown-operator',
            opPath,
            `${op} takes a string or { "equals-ignore-case": string }, got keys ${keys.join(', ') || '(none)'}`,
          );
        }
        const folded = fold(
          stringOperand(
            (operand as Record<string, unknown>)['equals-ignore-case'],
            childPath(opPath, 'equals-ignore-case'),
            'equals-ignore-case',
          ),
        );
        return fromStart
          ? (v) =>
              typeof v === 'string' && v.length >= folded.length && fold(v.slice(0, folded.length)) === folded
          : (v) =>
              typeof v === 'string' &&
              v.length >= folded.length &&
              fold(v.slice(v.length - folded.length)) === folded;
      }
      const affix = stringOperand(operand, opPath, op);
      return fromStart
        ? (v) => typeof v === 'string' && v.startsWith(affix)
        : (v) => typeof v === 'string' && v.endsWith(affix);
    }
    case 'equals-ignore-case': {
      const folded = fold(stringOperand(operand, opPath, op));
      return (v) => typeof v === 'string' && fold(v) === folded;
    }
    case 'wildcard': {
      const re = compileWildcard(stringOperand(operand, opPath, op), opPath);
      return (v) => typeof v === 'string' && re.test(v);
    }
    case 'cidr': {
      const inBlock = compileCidr(operand, opPath);
      return (v) => typeof v === 'string' && inBlock(v);
    }
    case 'numeric': {
      const range = parseNumericRange(operand, opPath);
      return (v) => typeof v === 'number' && inRange(range, toMicros(v));
    }
    case 'anything-but':
      return compileAnythingBut(operand, opPath);
    default:
      throw new InvalidPatternError(
        'unknown-operator',
        at,
        `unknown operator ${JSON.stringify(op)} (known: ${OPERATORS.join(', ')})`,
      );
  }
}

/**
 * anything-but matches any leaf value except the listed ones — including values of another type
 * (a number passes a string list, and null or true pass any list), because event-ruler only
 * excludes a value when its type matches the list's. It still needs a leaf: a missing field fails.
 */
function compileAnythingBut(operand: unknown, path: string): Predicate {
  if (typeof operand === 'string') return (v) => v !== operand;
  if (typeof operand === 'number') {
    const micros = operandMicros(operand, path, 'an anything-but number');
    return (v) => !(typeof v === 'number' && toMicros(v) === micros);
  }
  if (Array.isArray(operand)) {
    if (operand.length === 0)
      throw new InvalidPatternError('empty-array', path, 'anything-but needs at least one value');
    if (operand.every((x) => typeof x === 'string')) {
      const excluded = new Set<string>(operand as string[]);
      return (v) => !(typeof v === 'string' && excluded.has(v));
    }
    if (operand.every((x) => typeof x === 'number')) {
      const excluded = new Set<number>(
        operand.map((x, i) => operandMicros(x, indexPath(path, i), 'an anything-but number')),
      );
      return (v) => !(typeof v === 'number' && excluded.has(toMicros(v)));
    }
    throw new InvalidPatternError(
      'invalid-operand',
      path,
      'anything-but values must be all strings or all numbers (no mixing, no null or booleans)',
    );
  }
  if (operand !== null && typeof operand === 'object') {
    const keys = Object.keys(operand);
    if (keys.length !== 1) {
      throw new InvalidPatternError(
        'invalid-operand',
        path,
        `anything-but takes one of prefix, suffix, equals-ignore-case, wildcard; got ${keys.join(', ') || '(none)'}`,
      );
    }
    const op = keys[0] as string;
    const opPath = childPath(path, op);
    if (op !== 'prefix' && op !== 'suffix' && op !== 'equals-ignore-case' && op !== 'wildcard') {
      throw new InvalidPatternError(
        'unknown-operator',
        opPath,
        `unsupported anything-but operator ${JSON.stringify(op)} (known: prefix, suffix, equals-ignore-case, wildcard)`,
      );
    }
    const values = stringList((operand as Record<string, unknown>)[op], opPath, `anything-but/${op}`);
    switch (op) {
      case 'prefix':
      case 'suffix':
        values.forEach((s, i) => {
          if (s === '')
            throw new InvalidPatternError(
              'invalid-operand',
              Array.isArray((operand as Record<string, unknown>)[op]) ? indexPath(opPath, i) : opPath,
              `an empty ${op} is not allowed in anything-but`,
            );
        });
        return op === 'prefix'
          ? (v) => !(typeof v === 'string' && values.some((p) => v.startsWith(p)))
          : (v) => !(typeof v === 'string' && values.some((s) => v.endsWith(s)));
      case 'equals-ignore-case': {
        const folded = new Set(values.map(fold));
        return (v) => !(typeof v === 'string' && folded.has(fold(v)));
      }
      default: {
        // wildcard, the only operator left after the check above
        const res = values.map((w, i) =>
          compileWildcard(
            w,
            Array.isArray((operand as Record<string, unknown>)[op]) ? indexPath(opPath, i) : opPath,
          ),
        );
        return (v) => !(typeof v === 'string' && res.some((re) => re.test(v)));
      }
    }
  }
  throw new InvalidPatternError(
    'invalid-operand',
    path,
    'anything-but takes a string, a number, an array of either, or an operator object',
  );
}

function stringOperand(operand: unknown, path: string, op: string): string {
  if (typeof operand !== 'string') {
    throw new InvalidPatternError(
      'invalid-operand',
      path,
      `${op} takes a string, got ${operand === null ? 'null' : Array.isArray(operand) ? 'an array' : typeof operand}`,
    );
  }
  return operand;
}

function stringList(operand: unknown, path: string, op: string): string[] {
  if (typeof operand === 'string') return [operand];
  if (Array.isArray(operand)) {
    if (operand.length === 0)
      throw new InvalidPatternError('empty-array', path, `${op} needs at least one value`);
    return operand.map((x, i) => stringOperand(x, indexPath(path, i), op));
  }
  return [stringOperand(operand, path, op)];
}

/** Case folding for equals-ignore-case: lower-casing both sides covers the cases event-ruler folds. */
function fold(s: string): string {
  return s.toLowerCase();
}
