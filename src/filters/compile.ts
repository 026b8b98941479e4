import { expectArray, InvalidPatternError } from './errors.js';
import { compileConditionList, type LeafMatcher, OPERATORS } from './leaf.js';
import { childPath, indexPath, ROOT_PATH } from './path.js';
import type { EventMatcher, FilterPattern, ItemFilterPattern } from './types.js';

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
 * - `$or` is expanded the way event-ruler's JsonRuleCompiler does it, into one sub-rule per
 *   combination of branches, each a plain AND of full paths; the pattern matches when any sub-rule
 *   does. Evaluating `$or` in place would differ under event arrays (an alternative made only of
 *   `exists: false` must hold for every element, and a branch field shares its array element with
 *   the sibling fields it is merged with) and where a branch names a path its siblings also name
 *   (the field written last replaces the earlier one, as in event-ruler).
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
  /** Has a condition other than `exists: false`, so it can bind one array element. */
  readonly positive: boolean;
}

/** A validated pattern object, in document order: condition lists, nested objects and `$or`s. */
type Step =
  | { readonly kind: 'leaf'; readonly key: string; readonly leaf: LeafMatcher }
  | { readonly kind: 'object'; readonly key: string; readonly steps: readonly Step[] }
  | { readonly kind: 'or'; readonly path: string; readonly branches: readonly (readonly Step[])[] };

/** One expanded sub-rule: full field path (JSON of its segments) → the path and its condition list. */
type SubRule = Map<string, { readonly segments: readonly string[]; readonly leaf: LeafMatcher }>;

const OR_KEY = '$or';
/** Names event-ruler refuses as fields inside `$or` (its RESERVED_FIELD_NAMES_IN_OR_RELATIONSHIP). */
const RESERVED_IN_OR = new Set<string>([
  ...OPERATORS,
  'html',
  '=',
  '<',
  '<=',
  '>',
  '>=',
  // Reserved by event-ruler for operators it may add; refused today all the same.
  'regex',
  'not-wildcard',
  'not-equals-ignore-case',
  'date-after',
  'date-on-or-after',
  'date-before',
  'date-on-or-before',
  'in-date-range',
  'ip-address-in-range',
  'ip-address-not-in-range',
]);
/**
 * Sub-rules one pattern may expand into. event-ruler materializes every combination too; a pattern
 * past this bound (nested `$or`s multiply) is refused rather than left to exhaust memory.
 */
export const MAX_OR_COMBINATIONS = 1024;

/**
 * Validates `pattern` (an object or its JSON text) and returns a fast matcher. Throws InvalidPatternError.
 * `compilePattern<Order>(pattern)` checks the pattern's attribute names against Order's fields.
 */
export function compilePattern(pattern: FilterPattern | string): EventMatcher;
export function compilePattern<T extends object>(pattern: ItemFilterPattern<T>): EventMatcher;
export function compilePattern(pattern: FilterPattern | ItemFilterPattern<object> | string): EventMatcher {
  const steps = compileObject(parsePattern(pattern), ROOT_PATH, false);
  const roots = expand(steps, [], [new Map()], undefined).map(toNode);
  if (roots.length === 1) {
    const root = roots[0] as ObjectNode;
    return (event: unknown) => matchNode(root, event);
  }
  return (event: unknown) => {
    for (let i = 0; i < roots.length; i++) if (matchNode(roots[i] as ObjectNode, event)) return true;
    return false;
  };
}

/**
 * The first path (`$.eventName`) whose condition list a `$or` branch and a sibling field both set,
 * or undefined. event-ruler keeps only the one written last, silently widening or narrowing the
 * pattern; the builder refuses such a pattern. Validates like compilePattern.
 */
export function findOverriddenPath(pattern: FilterPattern): string | undefined {
  let found: string | undefined;
  expand(compileObject(parsePattern(pattern), ROOT_PATH, false), [], [new Map()], (segments) => {
    found ??= segments.reduce(childPath, ROOT_PATH);
  });
  return found;
}

/**
 * compilePattern + evaluate, for one-off checks. Nothing is cached: hot paths should compile once.
 * `matchesPattern<Order>(pattern, event)` checks the pattern's attribute names against Order's fields.
 */
export function matchesPattern(pattern: FilterPattern | string, event: unknown): boolean;
export function matchesPattern<T extends object>(pattern: ItemFilterPattern<T>, event: unknown): boolean;
export function matchesPattern(
  pattern: FilterPattern | ItemFilterPattern<object> | string,
  event: unknown,
): boolean {
  return compilePattern(pattern as FilterPattern)(event);
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

function compileObject(pattern: Record<string, unknown>, path: string, insideOr: boolean): Step[] {
  const steps: Step[] = [];
  const fields = Object.keys(pattern);
  if (fields.length === 0)
    throw new InvalidPatternError('empty-object', path, 'empty objects are not allowed');
  for (const key of fields) {
    const value = pattern[key];
    const at = childPath(path, key);
    if (key === OR_KEY) {
      steps.push({ kind: 'or', path: at, branches: compileOr(value, at) });
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
      steps.push({ kind: 'leaf', key, leaf: compileConditionList(value, at) });
    } else if (isObject(value)) {
      steps.push({ kind: 'object', key, steps: compileObject(value, at, insideOr) });
    } else {
      throw new InvalidPatternError(
        'not-an-array',
        at,
        `"${key}" must be an object or an array of conditions, got ${describe(value)} (write [${JSON.stringify(value) ?? ''}])`,
      );
    }
  }
  return steps;
}

function compileOr(value: unknown, path: string): Step[][] {
  expectArray(value, 'invalid-or', path, '$or must be an array of at least two objects');
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

/**
 * Writes `steps` into every sub-rule in `rules`, forking them at each `$or` — JsonRuleCompiler's
 * walk. A path written twice keeps the later condition list, as event-ruler's rule map does.
 */
function expand(
  steps: readonly Step[],
  prefix: readonly string[],
  rules: SubRule[],
  onOverride: ((segments: readonly string[]) => void) | undefined,
): SubRule[] {
  let current = rules;
  for (const step of steps) {
    if (step.kind === 'leaf') {
      const segments = [...prefix, step.key];
      const id = JSON.stringify(segments);
      for (const rule of current) {
        if (onOverride !== undefined && rule.has(id)) onOverride(segments);
        rule.set(id, { segments, leaf: step.leaf });
      }
    } else if (step.kind === 'object') {
      current = expand(step.steps, [...prefix, step.key], current, onOverride);
    } else {
      const forked: SubRule[] = [];
      for (const branch of step.branches) {
        forked.push(
          ...expand(
            branch,
            prefix,
            current.map((rule) => new Map(rule)),
            onOverride,
          ),
        );
        if (forked.length > MAX_OR_COMBINATIONS) {
          throw new InvalidPatternError(
            'invalid-or',
            step.path,
            `the pattern expands into more than ${MAX_OR_COMBINATIONS} combinations of $or branches ` +
              '(each $or multiplies the alternatives of every other); split it into separate filters',
          );
        }
      }
      current = forked;
    }
  }
  return current;
}

interface NodeDraft {
  readonly leaves: Map<string, LeafMatcher>;
  readonly children: Map<string, NodeDraft>;
}

/** Turns one sub-rule's flat paths back into a tree, so array consistency follows the event's shape. */
function toNode(rule: SubRule): ObjectNode {
  const root: NodeDraft = { leaves: new Map(), children: new Map() };
  for (const { segments, leaf } of rule.values()) {
    let draft = root;
    for (let i = 0; i < segments.length - 1; i++) {
      const key = segments[i] as string;
      let child = draft.children.get(key);
      if (child === undefined) {
        child = { leaves: new Map(), children: new Map() };
        draft.children.set(key, child);
      }
      draft = child;
    }
    draft.leaves.set(segments[segments.length - 1] as string, leaf);
  }
  return freeze(root);
}

function freeze(draft: NodeDraft): ObjectNode {
  const leafKeys = [...draft.leaves.keys()];
  const leaves = [...draft.leaves.values()];
  const nodeKeys = [...draft.children.keys()];
  const nodes = [...draft.children.values()].map(freeze);
  const guarded = (k: string) => k in Object.prototype;
  return {
    leafKeys,
    leaves,
    nodeKeys,
    nodes,
    leafGuarded: leafKeys.map(guarded),
    nodeGuarded: nodeKeys.map(guarded),
    positive: leaves.some((l) => l.positive) || nodes.some((n) => n.positive),
  };
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
  const { leafKeys, leaves, leafGuarded, nodeKeys, nodes, nodeGuarded } = node;
  for (let i = 0; i < leafKeys.length; i++) {
    const fieldValue = read(object, leafKeys[i] as string, leafGuarded[i] as boolean);
    if (!matchLeaf(leaves[i] as LeafMatcher, fieldValue)) return false;
  }
  for (let i = 0; i < nodeKeys.length; i++) {
    const fieldValue = read(object, nodeKeys[i] as string, nodeGuarded[i] as boolean);
    if (!matchNode(nodes[i] as ObjectNode, fieldValue)) return false;
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
