/**
 * Filter patterns as Lambda event source mappings take them (event-ruler syntax). Plain JSON
 * objects: the builder produces them, `compilePattern` evaluates them, the exporters serialize them.
 */

/** A literal a pattern can match exactly. */
export type FilterScalar = string | number | boolean | null;

/** `{ "prefix": "x" }` or `{ "prefix": { "equals-ignore-case": "x" } }` (same shape for suffix). */
export type AffixOperand = string | { readonly 'equals-ignore-case': string };

export type AnythingButOperand =
  | string
  | number
  | readonly string[]
  | readonly number[]
  | { readonly prefix: string | readonly string[] }
  | { readonly suffix: string | readonly string[] }
  | { readonly 'equals-ignore-case': string | readonly string[] }
  | { readonly wildcard: string | readonly string[] };

export type NumericOperand =
  | readonly ['=', number]
  | readonly ['<' | '<=' | '>' | '>=', number]
  | readonly ['>' | '>=', number, '<' | '<=', number];

/** One operator object inside a field's condition list. */
export type MatchExpression =
  | { readonly prefix: AffixOperand }
  | { readonly suffix: AffixOperand }
  | { readonly 'equals-ignore-case': string }
  | { readonly 'anything-but': AnythingButOperand }
  | { readonly numeric: NumericOperand }
  | { readonly exists: boolean }
  | { readonly wildcard: string }
  | { readonly cidr: string }
  | { readonly exactly: string };

/** One element of a field's condition list; the list matches when any element does. */
export type FilterCondition = FilterScalar | MatchExpression;

/**
 * A pattern: fields AND, each field either a condition list (OR) or a nested pattern; `$or` holds
 * two or more alternative sub-patterns evaluated at the same level.
 */
export interface FilterPattern {
  readonly [field: string]: readonly FilterCondition[] | FilterPattern | readonly FilterPattern[];
}

/** A compiled pattern: true when Lambda would deliver the record to the function. */
export type EventMatcher = (event: unknown) => boolean;

/** The CloudFormation / Lambda API shape of an event source mapping's filters. */
export interface FilterCriteria {
  Filters: { Pattern: string }[];
}
