import { TidewaterError } from '../core/errors.js';

/** Why a filter pattern was refused. Stable strings: tests and callers branch on them. */
export type InvalidPatternReason =
  | 'not-json'
  | 'not-an-object'
  | 'empty-object'
  | 'not-an-array'
  | 'empty-array'
  | 'invalid-value'
  | 'unknown-operator'
  | 'invalid-operand'
  | 'invalid-numeric'
  | 'invalid-cidr'
  | 'invalid-wildcard'
  | 'invalid-or'
  | 'conflicting-conditions'
  | 'not-supported-by-dynamodb';

/**
 * A filter pattern event-ruler (and so Lambda) would reject, or one the builder refuses because it
 * could never match a DynamoDB stream record. `path` locates the problem inside the pattern
 * (`$.dynamodb.NewImage.price.N[0].numeric`), so a long pattern need not be bisected by hand.
 */
export class InvalidPatternError extends TidewaterError {
  override name = 'InvalidPatternError';
  readonly reason: InvalidPatternReason;
  readonly path: string;
  readonly detail: string;

  constructor(reason: InvalidPatternReason, path: string, detail: string, options?: { cause?: unknown }) {
    super(`invalid filter pattern (${reason}) at ${path}: ${detail}`, options);
    this.reason = reason;
    this.path = path;
    this.detail = detail;
  }
}

/** Refuses a pattern value that must be an array (a field's conditions, an operator's operand). */
export function expectArray(
  value: unknown,
  reason: InvalidPatternReason,
  path: string,
  detail: string,
): asserts value is unknown[] {
  if (!Array.isArray(value)) throw new InvalidPatternError(reason, path, detail);
}

/** Why FilterCriteriaError refused a set of patterns. */
export type FilterCriteriaReason = 'no-filters' | 'too-many-filters' | 'pattern-too-long';

/**
 * A set of patterns Lambda would refuse as an event source mapping's FilterCriteria (more filters
 * than the mapping allows, a pattern over 4,096 characters). Raised at build time so a deploy does
 * not fail halfway — or, worse, deploy without the filter.
 */
export class FilterCriteriaError extends TidewaterError {
  override name = 'FilterCriteriaError';
  readonly reason: FilterCriteriaReason;
  /** Index of the offending pattern, when one pattern is at fault. */
  readonly index: number | undefined;

  constructor(reason: FilterCriteriaReason, detail: string, index?: number) {
    super(`invalid FilterCriteria (${reason})${index === undefined ? '' : ` at filter ${index}`}: ${detail}`);
    this.reason = reason;
    this.index = index;
  }
}
