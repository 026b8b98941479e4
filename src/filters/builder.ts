import type { Item, StreamEventName } from '../records/types.js';
import { findOverriddenPath } from './compile.js';
import { InvalidPatternError } from './errors.js';
import { compileConditionList } from './leaf.js';
import { childPath, indexPath, ROOT_PATH } from './path.js';
import { isStringTypedAttributePath } from './string-typed.js';
import type { AttributeName, ElementOf, FieldOf, FilterCondition, FilterPattern } from './types.js';

/**
 * A DynamoDB-aware pattern builder. Every helper returns a plain pattern fragment; `pattern()`
 * merges fragments (AND) and validates the result. Attribute helpers always put the DynamoDB type
 * key in the path (`dynamodb.NewImage.price.N`) — Lambda matches the JSON it delivers, where an
 * attribute is `{ "N": "42" }`, never a bare value — and put `exists` under that type key, the only
 * place where it tests a leaf.
 */

type Fragment = FilterPattern;

/** AND of fragments, merged into one pattern. Two conditions on the same path are refused, not OR'ed. */
export function filterPattern(...fragments: readonly Fragment[]): FilterPattern {
  if (fragments.length === 0)
    throw new InvalidPatternError('empty-object', ROOT_PATH, 'filterPattern() needs at least one fragment');
  let merged: Record<string, unknown> = {};
  for (const fragment of fragments)
    merged = mergeInto(merged, fragment as Record<string, unknown>, ROOT_PATH);
  return checkedPattern(merged as FilterPattern);
}

/** `$or` of two or more alternatives. event-ruler supports it; Lambda's docs do not list it (see docs/filters.md). */
export function anyOfPatterns(...alternatives: readonly Fragment[]): FilterPattern {
  return checkedPattern({ $or: alternatives.map((a) => ({ ...a })) });
}

/**
 * Validates a built pattern (findOverriddenPath compiles it as compilePattern does) and refuses a
 * `$or` branch that names a path its siblings also name.
 */
function checkedPattern(pattern: FilterPattern): FilterPattern {
  const overridden = findOverriddenPath(pattern);
  if (overridden !== undefined) {
    throw new InvalidPatternError(
      'conflicting-conditions',
      overridden,
      'a $or branch and a field outside it set conditions on the same path; event-ruler does not AND them ' +
        'but keeps only the condition list written last, so the filter would select other records than it reads. ' +
        'Put the condition in every $or branch instead, or OR the values in one list with .anyOf(...)',
    );
  }
  return pattern;
}

/** Records whose eventName is one of `names`. */
export function eventNames(...names: readonly StreamEventName[]): FilterPattern {
  if (names.length === 0)
    throw new InvalidPatternError('empty-array', '$.eventName', 'eventNames() needs at least one name');
  for (const n of names) {
    if (n !== 'INSERT' && n !== 'MODIFY' && n !== 'REMOVE') {
      throw new InvalidPatternError(
        'invalid-value',
        '$.eventName',
        `${JSON.stringify(n)} is not a stream eventName (INSERT, MODIFY, REMOVE)`,
      );
    }
  }
  return { eventName: [...names] };
}

/** Conditions on the record's top-level `userIdentity` (present only on TTL deletes today). */
export function userIdentityPattern(identity: { type?: string; principalId?: string }): FilterPattern {
  const fields: Record<string, FilterCondition[]> = {};
  for (const key of Object.keys(identity)) {
    if (key !== 'type' && key !== 'principalId') {
      throw new InvalidPatternError(
        'invalid-value',
        childPath('$.userIdentity', key),
        `unknown userIdentity field "${key}" (type, principalId)`,
      );
    }
  }
  if (identity.type !== undefined) fields.type = [identity.type];
  if (identity.principalId !== undefined) fields.principalId = [identity.principalId];
  if (Object.keys(fields).length === 0)
    throw new InvalidPatternError('empty-object', '$.userIdentity', 'give type and/or principalId');
  return { userIdentity: fields };
}

/** An arbitrary path with a raw condition list, for fields the typed helpers do not cover (e.g. `dynamodb.SizeBytes`). */
export function fieldPattern(path: readonly string[], conditions: readonly FilterCondition[]): FilterPattern {
  if (path.length === 0)
    throw new InvalidPatternError('empty-object', ROOT_PATH, 'fieldPattern() needs a non-empty path');
  compileConditionList(conditions, pathText(path));
  if (isStringTypedAttributePath(path)) refuseNonStringConditions(conditions, path);
  return nest(path, [...conditions]);
}

/*
 * Given an item type, attribute names are checked against its fields at compile time:
 * `newImageAttribute<Order>('status')` checks the name; `itemAttributes<Order>().newImage('address')`
 * also knows the attribute's type, so nested names are checked too (`.M.attribute('city')`,
 * `.L.element()`). Without one any name goes. Only names: which type key (S, N…) an attribute has
 * in the stream is not in its TypeScript type (a number may be a bigint, a NumberValue or text, by
 * the numbers policy).
 */

/** A key attribute: `dynamodb.Keys.<name>`. */
export function keyAttribute<T extends object = Item>(name: AttributeName<T>): AttributeFilter {
  return attributeAt(['dynamodb', 'Keys', attributeName(name)]);
}
/** An attribute of the item after the change: `dynamodb.NewImage.<name>` (stream views NEW_IMAGE, NEW_AND_OLD_IMAGES). */
export function newImageAttribute<T extends object = Item>(name: AttributeName<T>): AttributeFilter {
  return attributeAt(['dynamodb', 'NewImage', attributeName(name)]);
}
/** An attribute of the item before the change: `dynamodb.OldImage.<name>` (stream views OLD_IMAGE, NEW_AND_OLD_IMAGES). */
export function oldImageAttribute<T extends object = Item>(name: AttributeName<T>): AttributeFilter {
  return attributeAt(['dynamodb', 'OldImage', attributeName(name)]);
}

/** keyAttribute, newImageAttribute and oldImageAttribute for item type T, each typed by the attribute named. */
export interface ItemAttributes<T> {
  key<const N extends AttributeName<T>>(name: N): AttributeFilter<FieldOf<T, N>>;
  newImage<const N extends AttributeName<T>>(name: N): AttributeFilter<FieldOf<T, N>>;
  oldImage<const N extends AttributeName<T>>(name: N): AttributeFilter<FieldOf<T, N>>;
}

/** `const order = itemAttributes<Order>()`: `order.newImage('address').M.attribute('city')` is checked at every level. */
export function itemAttributes<T extends object>(): ItemAttributes<T> {
  return {
    key: (name: string) => keyAttribute(name),
    newImage: (name: string) => newImageAttribute(name),
    oldImage: (name: string) => oldImageAttribute(name),
  } as ItemAttributes<T>;
}

/** Compare text without regard to case (`equalsIgnoreCase`). */
export interface IgnoreCaseOption {
  ignoreCase?: boolean;
}

/** Conditions on a string-valued type key (S, B, and N — whose value Lambda delivers as a string). */
export interface StringTypeFilter {
  /** Exactly one of `values`. */
  equals(...values: readonly string[]): FilterPattern;
  equalsIgnoreCase(value: string): FilterPattern;
  prefix(value: string, options?: IgnoreCaseOption): FilterPattern;
  suffix(value: string, options?: IgnoreCaseOption): FilterPattern;
  /** Present with any value except `values`; an absent attribute does not match. */
  anythingBut(...values: readonly string[]): FilterPattern;
  /** The attribute is present with this type. */
  exists(): FilterPattern;
  /** The attribute is absent, or present with another type. */
  notExists(): FilterPattern;
  /** A raw condition list (any of them), validated; conditions that can never match text are refused. */
  anyOf(...conditions: readonly FilterCondition[]): FilterPattern;
}

/** Filter conditions on an N attribute: equality on DynamoDB's number text, and numeric ranges. */
export interface NumberTypeFilter extends Omit<StringTypeFilter, 'equals' | 'anythingBut'> {
  /** Exactly one of `values`, compared as DynamoDB's number text ("42", not "42.0"). */
  equals(...values: readonly (string | number)[]): FilterPattern;
  anythingBut(...values: readonly (string | number)[]): FilterPattern;
  /** Always throws: see the error message. Present so the refusal explains itself. */
  numeric(..._operand: readonly unknown[]): never;
}

/** Filter conditions on a BOOL attribute (`newImageAttribute('flag').bool()`). */
export interface BoolTypeFilter {
  equals(value: boolean): FilterPattern;
  exists(): FilterPattern;
  notExists(): FilterPattern;
}

/** Filter conditions on whether an attribute is present, whatever its type. */
export interface PresenceTypeFilter {
  exists(): FilterPattern;
  notExists(): FilterPattern;
}

/** SS / NS / BS: the set is a JSON array, so a condition matches when any member does. */
export interface SetTypeFilter {
  contains(...values: readonly string[]): FilterPattern;
  prefix(value: string, options?: IgnoreCaseOption): FilterPattern;
  exists(): FilterPattern;
  notExists(): FilterPattern;
  anyOf(...conditions: readonly FilterCondition[]): FilterPattern;
}

/** `V` is the map's type in the item, when known: its member names are then checked. */
export interface MapTypeFilter<V = unknown> {
  /** A member of the map: `<path>.M.<name>`. */
  attribute<const N extends AttributeName<V>>(name: N): AttributeFilter<FieldOf<V, N>>;
  exists(): never;
  notExists(): never;
}

/** Filter conditions on an L attribute: its elements, matched element-wise. */
export interface ListTypeFilter<V = unknown> {
  /** Any element of the list (event arrays match element-wise): `<path>.L`. */
  element(): AttributeFilter<ElementOf<V>>;
  exists(): never;
  notExists(): never;
}

/** Conditions on one attribute, by its DynamoDB type key. `V`: its type in the item, when known. */
export interface AttributeFilter<V = unknown> {
  readonly S: StringTypeFilter;
  readonly N: NumberTypeFilter;
  readonly B: StringTypeFilter;
  readonly BOOL: BoolTypeFilter;
  readonly NULL: PresenceTypeFilter;
  readonly SS: SetTypeFilter;
  readonly NS: SetTypeFilter;
  readonly BS: SetTypeFilter;
  readonly M: MapTypeFilter<V>;
  readonly L: ListTypeFilter<V>;
}

function boolFilter(path: readonly string[]): BoolTypeFilter {
  return {
    equals: (value: boolean) => {
      if (typeof value !== 'boolean')
        throw new InvalidPatternError('invalid-value', pathText(path), 'BOOL.equals takes true or false');
      return nest(path, [value]);
    },
    ...presence(path),
  };
}

function mapFilter(path: readonly string[]): MapTypeFilter<unknown> {
  return {
    attribute: (name: string) => attributeAt([...path, attributeName(name)]),
    exists: () => refuseIntermediateExists(path),
    notExists: () => refuseIntermediateExists(path),
  };
}

function listFilter(path: readonly string[]): ListTypeFilter<unknown> {
  return {
    element: () => attributeAt(path),
    exists: () => refuseIntermediateExists(path),
    notExists: () => refuseIntermediateExists(path),
  };
}

/** Each type key's filter, from the path that ends in the key; `M` and `L` lead to attributeAt again. */
const TYPE_FILTERS = {
  S: stringFilter,
  B: stringFilter,
  N: numberFilter,
  BOOL: boolFilter,
  NULL: presence,
  SS: setFilter,
  NS: setFilter,
  BS: setFilter,
  M: mapFilter,
  L: listFilter,
} satisfies Record<keyof AttributeFilter<unknown>, (path: readonly string[]) => unknown>;

/** One getter per type key: a filter is built only when its key is read (M and L nest without end). */
function attributeAt<V>(base: readonly string[]): AttributeFilter<V> {
  const filter = {};
  for (const [type, make] of Object.entries(TYPE_FILTERS)) {
    Object.defineProperty(filter, type, {
      get: () => make([...base, type]),
      enumerable: true,
      configurable: true,
    });
  }
  return filter as AttributeFilter<V>;
}

function stringFilter(path: readonly string[]): StringTypeFilter {
  return {
    equals: (...values) => nest(path, nonEmptyStrings(values, path, 'equals')),
    equalsIgnoreCase: (value) => nest(path, [{ 'equals-ignore-case': str(value, path) }]),
    prefix: (value, options) => nest(path, [{ prefix: affix(value, path, options) }]),
    suffix: (value, options) => nest(path, [{ suffix: affix(value, path, options) }]),
    anythingBut: (...values) =>
      nest(path, [{ 'anything-but': nonEmptyStrings(values, path, 'anythingBut') }]),
    ...presence(path),
    anyOf: (...conditions) => {
      compileConditionList(conditions, pathText(path));
      refuseNonStringConditions(conditions, path);
      return nest(path, [...conditions]);
    },
  };
}

/**
 * S, N, B and the sets reach the filter as JSON strings, so a number, boolean or null literal and a
 * `numeric` condition can never match them, and a numeric `anything-but` excludes nothing. Each
 * would silently drop (or keep) every record; refuse them with the reason.
 */
function refuseNonStringConditions(conditions: readonly FilterCondition[], path: readonly string[]): void {
  const type = path[path.length - 1] as string;
  conditions.forEach((condition, i) => {
    const at = indexPath(pathText(path), i);
    if (condition === null || typeof condition === 'number' || typeof condition === 'boolean') {
      throw new InvalidPatternError(
        'not-supported-by-dynamodb',
        at,
        `${JSON.stringify(condition)} never matches a DynamoDB ${type} value: Lambda delivers it as a JSON string ` +
          `(e.g. {"N": "42"}) and event-ruler does not compare across JSON types. Give the value as text, e.g. "42"`,
      );
    }
    if (typeof condition !== 'object') return;
    if ('numeric' in condition) throw numericOnString(type, at);
    const operand = (condition as { 'anything-but'?: unknown })['anything-but'];
    if (
      typeof operand === 'number' ||
      (Array.isArray(operand) && operand.some((v) => typeof v === 'number'))
    ) {
      throw new InvalidPatternError(
        'not-supported-by-dynamodb',
        at,
        `a numeric anything-but excludes nothing from a DynamoDB ${type} value, which Lambda delivers as a JSON ` +
          'string, so every record would pass. List the excluded values as text, e.g. {"anything-but": ["42"]}',
      );
    }
  });
}

function numericOnString(type: string, at: string): InvalidPatternError {
  return new InvalidPatternError(
    'not-supported-by-dynamodb',
    at,
    `numeric never matches a DynamoDB ${type} value: Lambda delivers it as a JSON string ({"${type}": "42"}) and ` +
      'event-ruler applies numeric only to JSON numbers, so the filter would silently drop every record. ' +
      'Match the exact text with N.equals(...) / N.prefix(...), or filter in the handler.',
  );
}

function numberFilter(path: readonly string[]): NumberTypeFilter {
  const base = stringFilter(path);
  return {
    ...base,
    equals: (...values) => base.equals(...values.map((v) => numberText(v, path))),
    anythingBut: (...values) => base.anythingBut(...values.map((v) => numberText(v, path))),
    numeric: () => {
      throw numericOnString('N', pathText(path));
    },
  };
}

function setFilter(path: readonly string[]): SetTypeFilter {
  const base = stringFilter(path);
  return {
    contains: (...values) => base.equals(...values),
    prefix: base.prefix,
    exists: base.exists,
    notExists: base.notExists,
    anyOf: base.anyOf,
  };
}

function presence(path: readonly string[]): PresenceTypeFilter {
  return {
    exists: () => nest(path, [{ exists: true }]),
    notExists: () => nest(path, [{ exists: false }]),
  };
}

function refuseIntermediateExists(path: readonly string[]): never {
  throw new InvalidPatternError(
    'not-supported-by-dynamodb',
    pathText(path),
    'exists only tests leaves (strings, numbers, booleans, null); a map or list is an intermediate node, so ' +
      'exists:false would match even when the attribute is present and exists:true never would. ' +
      'Test a leaf inside it instead (e.g. .M.attribute("x").S.exists()).',
  );
}

function numberText(value: string | number, path: readonly string[]): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new InvalidPatternError(
        'invalid-value',
        pathText(path),
        `${value}: pass non-integer or large numbers as DynamoDB number text (a string), since the match is on the exact text`,
      );
    }
    return String(value);
  }
  return str(value, path);
}

function affix(value: string, path: readonly string[], options: IgnoreCaseOption | undefined) {
  if (options !== undefined) {
    for (const k of Object.keys(options)) {
      if (k !== 'ignoreCase')
        throw new InvalidPatternError('invalid-value', pathText(path), `unknown option "${k}" (ignoreCase)`);
    }
  }
  const text = str(value, path);
  return options?.ignoreCase ? { 'equals-ignore-case': text } : text;
}

function nonEmptyStrings(values: readonly string[], path: readonly string[], what: string): string[] {
  if (values.length === 0)
    throw new InvalidPatternError('empty-array', pathText(path), `${what}() needs at least one value`);
  return values.map((v) => str(v, path));
}

function str(value: unknown, path: readonly string[]): string {
  if (typeof value !== 'string') {
    throw new InvalidPatternError(
      'invalid-value',
      pathText(path),
      `expected a string, got ${value === null ? 'null' : typeof value}`,
    );
  }
  return value;
}

function attributeName(name: string): string {
  if (typeof name !== 'string' || name === '')
    throw new InvalidPatternError('invalid-value', ROOT_PATH, 'an attribute name must be a non-empty string');
  return name;
}

function nest(path: readonly string[], leaf: FilterCondition[]): FilterPattern {
  let node: unknown = leaf;
  for (let i = path.length - 1; i >= 0; i--) node = { [path[i] as string]: node };
  return node as FilterPattern;
}

function pathText(path: readonly string[]): string {
  return path.reduce((acc, segment) => childPath(acc, segment), ROOT_PATH);
}

function mergeInto(
  target: Record<string, unknown>,
  source: Record<string, unknown>,
  path: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...target };
  for (const k of Object.keys(source)) {
    const at = childPath(path, k);
    const incoming = source[k];
    if (!Object.hasOwn(out, k)) {
      out[k] = incoming;
      continue;
    }
    const existing = out[k];
    if (isPlainObject(existing) && isPlainObject(incoming)) {
      out[k] = mergeInto(existing, incoming, at);
      continue;
    }
    throw new InvalidPatternError(
      'conflicting-conditions',
      at,
      'two fragments set conditions on the same path; a field holds one condition list whose entries are OR-ed, ' +
        'so combine them with .anyOf(...) (OR) — AND on one path is not expressible',
    );
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
