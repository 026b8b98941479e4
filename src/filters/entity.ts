import { defineOptions } from '../core/options.js';
import type { ClassifiedRecord, Item } from '../records/types.js';
import { anyOfPatterns, keyAttribute, newImageAttribute, oldImageAttribute } from './builder.js';
import { compilePattern } from './compile.js';
import type { FilterPattern } from './types.js';

/**
 * Which of a table's entity types a record is, by one string attribute: a type attribute
 * (`{ attribute: 'entityType', equals: 'ORDER' }`) or a key prefix
 * (`{ attribute: 'sk', prefix: 'ORDER#' }`) — the single-table designs of reference 004.
 */
export interface EntitySpec {
  /** The attribute, a key attribute or any other (a string, `S`). */
  attribute: string;
  /** The value, or one of the values, it holds for this entity. */
  equals?: string | readonly string[];
  /** The prefix its value starts with for this entity. */
  prefix?: string;
}

/**
 * One entity type of a table, for `route({ entity, … })`: it narrows the route to that entity's
 * records and, given a type (`entity<Order>(…)`, unchecked: give the route an `item` schema to
 * check it), types them. `pattern` is the same selection as a Lambda filter pattern.
 */
export interface EntityDiscriminator<T extends object = Item> {
  /** `entityType = "ORDER"`, `sk begins_with "ORDER#"`. */
  readonly description: string;
  /**
   * The records whose Keys, NewImage or OldImage carries the value: put it on the event source
   * mapping too (toFilterCriteria) and other entities' records never reach the function.
   */
  readonly pattern: FilterPattern;
  /** The pattern compiled once, matched against the record as Lambda delivers it. */
  readonly test: (record: ClassifiedRecord) => boolean;
  /** The item type, for the type checker only: never set. */
  readonly '~item'?: T;
}

const readSpec = /* @__PURE__ */ defineOptions<EntitySpec>()('entity', {
  attribute: { kind: 'nonEmptyString', required: true },
  equals: {
    kind: 'custom',
    expected: 'a string or a non-empty list of strings',
    check: (v) =>
      typeof v === 'string' || (Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string')),
  },
  prefix: { kind: 'nonEmptyString' },
});

/**
 * `entity({ attribute: 'entityType', equals: 'ORDER' })`, `entity<Order>({ attribute: 'sk', prefix: 'ORDER#' })`.
 * Built from the filter builder and compiled by the filter evaluator, so it selects exactly what
 * its `pattern` selects on an event source mapping. Throws InvalidOptionsError.
 */
export function entity<T extends object = Item>(spec: EntitySpec): EntityDiscriminator<T> {
  const { attribute, equals, prefix } = readSpec(spec);
  if ((equals === undefined) === (prefix === undefined))
    throw readSpec.fail(`give exactly one of 'equals' and 'prefix' (attribute '${attribute}')`);
  const values = equals === undefined ? [] : typeof equals === 'string' ? [equals] : [...equals];
  const condition = (at: typeof keyAttribute): FilterPattern =>
    prefix === undefined ? at(attribute).S.equals(...values) : at(attribute).S.prefix(prefix);
  const pattern = anyOfPatterns(
    condition(keyAttribute),
    condition(newImageAttribute),
    condition(oldImageAttribute),
  );
  const matches = compilePattern(pattern);
  const description =
    prefix === undefined
      ? `${attribute} ${values.length === 1 ? '=' : 'in'} ${values.map((v) => JSON.stringify(v)).join(', ')}`
      : `${attribute} begins_with ${JSON.stringify(prefix)}`;
  return { description, pattern, test: (record) => matches(record.raw) };
}
