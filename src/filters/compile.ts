import { InvalidPatternError } from './errors.js';
import { compileConditionList, type LeafMatcher, OPERATORS } from './leaf.js';
import { childPath, indexPath, ROOT_PATH } from './path.js';
import type { EventMatcher, FilterPattern } from './types.js';

/**
 * The event-ruler evaluator. A pattern is validated and compiled once into a tree of nodes; the
 * returned closure walks the event along the pattern's paths only, so its cost is proportional to
 * the pattern, not to the record.
 *
 * Semantics (event-ruler's array-consistent matcher, `rulesForJSONEvent`):
 * - fields AND; a condition list matches when any condition matches any leaf at the path;
 * - only leaves (strings, numbers, booleans, null) count: an object at the path is not a value,
 *   so `exists: true` fails on it and `exists: false` succeeds;
 * - arrays in the event are matched element-wise: a leaf list matches if any element does; a
 *   sub-pattern under an array must be satisfied by one element (fields in different elements of
 *   the same array never combine). A sub-pattern made only of `exists: false` conditions holds
 *   when no element has a leaf at those paths.
 */
interface ObjectNode {
  // Leaves and nested nodes are kept in separate arrays so the hot loop never tests a child's kind.
  readonly leafKeys: readonly string[];
  readonly leaves: readonly LeafMatcher[];
  readonly nodeKeys: readonly string[];
  readonly nodes: readonly ObjectNode[];
  /** Per key in leafKeys / nodeKeys: the name shadows an Object.prototype member, so read it with hasOwn. */
  readonly leafGuarded: readonly boolean[];
  readonly nodeGuarded: readonly boolean[];
  readonly ors: readonly (readonly ObjectNode[])[];
  /** Has a condition other than `exists: false`, so it can bind one array element. */
  readonly positive: boolean;
}

const OR_KEY = '$or';
const RESERVED_IN_OR = new Set<string>([...OPERATORS, 'html', '=', '<', '<=', '>', '>=']);

/** Validates `pattern` (an object or its JSON text) and returns a fast matcher. Throws InvalidPatternError. */
export function compilePattern(pattern: FilterPattern | string): EventMatcher {
  const root = compileObject(parsePattern(pattern), ROOT_PATH, false);
  return (event: unknown) => matchNode(root, event);
}

/** compilePattern + evaluate, for one-off checks. Nothing is cached: hot paths should compile once. */
export function matchesPattern(pattern: FilterPattern | string, event: unknown): boolean {
  return compilePattern(pattern)(event);
}

export function parsePattern(pattern: unknown): Record<string, unknown> {
  let value = pattern;
  if (typeof pattern === 'string') {
    try {
      value = JSON.parse(pattern);
    } catch (error) {
      throw new InvalidPatternError(
        'not-json',
        ROOT_PATH,
        `the pattern is not valid JSON (${(error as Error).message})`,
        {
          cause: error,
        },
      );
    }
  }
  if (!isObject(value)) {
    throw new InvalidPatternError(
      'not-an-object',
      ROOT_PATH,
      `a pattern must be a JSON object, got ${describe(value)}`,
    );
  }
  return value;
}

function compileObject(pattern: Record<string, unknown>, path: string, insideOr: boolean): ObjectNode {
  const leafKeys: string[] = [];
  const leaves: LeafMatcher[] = [];
  const nodeKeys: string[] = [];
  const nodes: ObjectNode[] = [];
  const ors: ObjectNode[][] = [];
  let positive = false;
  const fields = Object.keys(pattern);
  if (fields.length === 0)
    throw new InvalidPatternError('empty-object', path, 'empty objects are not allowed');
  for (const key of fields) {
    const value = pattern[key];
    const at = childPath(path, key);
    if (key === OR_KEY) {
      const branches = compileOr(value, at);
      ors.push(branches);
      positive ||= branches.some((b) => b.positive);
      continue;
    }
    if (insideOr && RESERVED_IN_OR.has(key)) {
      throw new InvalidPatternError(
        'invalid-or',
        at,
        `"${key}" is an operator name and cannot be a field inside $or`,
      );
    }
    if (Array.isArray(value)) {
      const leaf = compileConditionList(value, at);
      leafKeys.push(key);
      leaves.push(leaf);
      positive ||= leaf.positive;
    } else if (isObject(value)) {
      const node = compileObject(value, at, insideOr);
      nodeKeys.push(key);
      nodes.push(node);
      positive ||= node.positive;
    } else {
      throw new InvalidPatternError(
        'not-an-array',
        at,
        `"${key}" must be an object or an array of conditions, got ${describe(value)} (write [${JSON.stringify(value) ?? ''}])`,
      );
    }
  }
  const guarded = (k: string) => k in Object.prototype;
  return {
    leafKeys,
    leaves,
    nodeKeys,
    nodes,
    leafGuarded: leafKeys.map(guarded),
    nodeGuarded: nodeKeys.map(guarded),
    ors,
    positive,
  };
}

function compileOr(value: unknown, path: string): ObjectNode[] {
  if (!Array.isArray(value))
    throw new InvalidPatternError('invalid-or', path, '$or must be an array of at least two objects');
  if (value.length < 2)
    throw new InvalidPatternError('invalid-or', path, `$or needs at least two objects, got ${value.length}`);
  return value.map((branch, i) => {
    const at = indexPath(path, i);
    if (!isObject(branch))
      throw new InvalidPatternError(
        'invalid-or',
        at,
        `every $or element must be an object, got ${describe(branch)}`,
      );
    return compileObject(branch, at, true);
  });
}

function matchNode(node: ObjectNode, value: unknown): boolean {
  if (Array.isArray(value)) {
    // A node with something to match binds one element; a node of pure absences must hold for all.
    if (node.positive) {
      for (let i = 0; i < value.length; i++) if (matchNode(node, value[i])) return true;
      return false;
    }
    for (let i = 0; i < value.length; i++) if (!matchNode(node, value[i])) return false;
    return true;
  }
  const object = isObject(value) ? value : undefined;
  const { leafKeys, leaves, leafGuarded, nodeKeys, nodes, nodeGuarded, ors } = node;
  for (let i = 0; i < leafKeys.length; i++) {
    const fieldValue = read(object, leafKeys[i] as string, leafGuarded[i] as boolean);
    if (!matchLeaf(leaves[i] as LeafMatcher, fieldValue)) return false;
  }
  for (let i = 0; i < nodeKeys.length; i++) {
    const fieldValue = read(object, nodeKeys[i] as string, nodeGuarded[i] as boolean);
    if (!matchNode(nodes[i] as ObjectNode, fieldValue)) return false;
  }
  for (let i = 0; i < ors.length; i++) {
    const branches = ors[i] as readonly ObjectNode[];
    let any = false;
    for (let j = 0; j < branches.length && !any; j++) any = matchNode(branches[j] as ObjectNode, value);
    if (!any) return false;
  }
  return true;
}

function read(object: Record<string, unknown> | undefined, key: string, guarded: boolean): unknown {
  if (object === undefined) return undefined;
  return guarded && !Object.hasOwn(object, key) ? undefined : object[key];
}

const NO_LEAF = 0;
const UNMATCHED_LEAF = 1;
const MATCHED_LEAF = 2;

function matchLeaf(leaf: LeafMatcher, value: unknown): boolean {
  if (value === undefined) return leaf.noLeaf;
  if (Array.isArray(value)) {
    const found = scanArray(leaf, value);
    return found === MATCHED_LEAF || (found === NO_LEAF && leaf.noLeaf);
  }
  // An object at the path is an intermediate node, not a value: there is no leaf here.
  if (typeof value === 'object' && value !== null) return leaf.noLeaf;
  return leaf.anyLeaf || leaf.test(value);
}

function scanArray(leaf: LeafMatcher, values: readonly unknown[]): number {
  let found = NO_LEAF;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (Array.isArray(v)) {
      const inner = scanArray(leaf, v);
      if (inner === MATCHED_LEAF) return MATCHED_LEAF;
      if (inner === UNMATCHED_LEAF) found = UNMATCHED_LEAF;
    } else if (v !== undefined && (typeof v !== 'object' || v === null)) {
      if (leaf.anyLeaf || leaf.test(v)) return MATCHED_LEAF;
      found = UNMATCHED_LEAF;
    }
  }
  return found;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${value}`;
  return typeof value;
}
