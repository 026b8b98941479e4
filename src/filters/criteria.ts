import { defineOptions } from '../core/options.js';
import { compilePattern, parsePattern } from './compile.js';
import { FilterCriteriaError, InvalidPatternError } from './errors.js';
import { emitFilterWarning, patternWarnings } from './lint.js';
import type { EventMatcher, FilterCriteria, FilterPattern } from './types.js';

/** Lambda's limits for an event source mapping's FilterCriteria. */
export const MAX_PATTERN_LENGTH = 4096;
/** Filters allowed on one event source mapping by Lambda's default quota. */
export const DEFAULT_MAX_FILTERS = 5;
/** The filters-per-mapping quota can be raised to this, not beyond. */
export const MAX_FILTERS_QUOTA = 10;

/** Options of toFilterCriteria and compileFilterCriteria: the filters-per-mapping limit. */
export interface FilterCriteriaOptions {
  /** Filters allowed on the mapping: 5 by default (Lambda's default quota), at most 10. */
  maxFilters?: number;
  /**
   * Called for a condition Lambda accepts but that never matches a stream record (`numeric` on an
   * `N` attribute: Lambda delivers numbers as strings). Default: a Node process warning with code
   * TIDEWATER_FILTER_NEVER_MATCHES.
   */
  onWarning?: (message: string) => void;
}

type PatternInput = FilterPattern | readonly FilterPattern[];

/** CloudFormation / SAM / Lambda API form: `{ Filters: [{ Pattern: "<json>" }] }`. Validates every pattern and the limits. */
export function toFilterCriteria(patterns: PatternInput, options?: FilterCriteriaOptions): FilterCriteria {
  return { Filters: checked(patterns, options, 'toFilterCriteria').map((text) => ({ Pattern: text })) };
}

/** serverless v3 form: the array under `functions.<fn>.events[].stream.filterPatterns`. */
export function toServerlessFilterPatterns(
  patterns: PatternInput,
  options?: FilterCriteriaOptions,
): FilterPattern[] {
  return checked(patterns, options, 'toServerlessFilterPatterns').map(
    (text) => JSON.parse(text) as FilterPattern,
  );
}

/**
 * A matcher for a whole mapping: Lambda delivers a record that matches any filter. With no filters
 * at all there is no filtering, so every record matches. Accepts FilterCriteria (Pattern strings)
 * or patterns; what the local emulator uses.
 */
export function compileFilterCriteria(
  criteria: FilterCriteria | readonly (FilterPattern | string)[],
): EventMatcher {
  let list: readonly (FilterPattern | string)[];
  if (Array.isArray(criteria)) list = criteria;
  else if (
    criteria !== null &&
    typeof criteria === 'object' &&
    Array.isArray((criteria as FilterCriteria).Filters)
  ) {
    list = (criteria as FilterCriteria).Filters.map((f) => f?.Pattern as string);
  } else {
    throw new FilterCriteriaError(
      'no-filters',
      'expected { Filters: [{ Pattern }] } or an array of patterns',
    );
  }
  const matchers = list.map((p, i) => {
    try {
      return compilePattern(p);
    } catch (error) {
      if (error instanceof InvalidPatternError) error.message = `filter ${i}: ${error.message}`;
      throw error;
    }
  });
  if (matchers.length === 0) return () => true;
  if (matchers.length === 1) return matchers[0] as EventMatcher;
  return (event) => {
    for (let i = 0; i < matchers.length; i++) if ((matchers[i] as EventMatcher)(event)) return true;
    return false;
  };
}

function checked(
  patterns: PatternInput,
  options: FilterCriteriaOptions | undefined,
  where: string,
): string[] {
  const { maxFilters, onWarning } = readOptions(options, where);
  const list: readonly FilterPattern[] = Array.isArray(patterns) ? patterns : [patterns as FilterPattern];
  if (list.length === 0) {
    throw new FilterCriteriaError(
      'no-filters',
      'no patterns given; omit FilterCriteria instead to deliver every record',
    );
  }
  if (list.length > maxFilters) {
    throw new FilterCriteriaError(
      'too-many-filters',
      `${list.length} filters, but the mapping allows ${maxFilters}` +
        (maxFilters < MAX_FILTERS_QUOTA
          ? ` (Lambda's default; the quota can be raised to ${MAX_FILTERS_QUOTA}, then pass { maxFilters })`
          : ` (Lambda's maximum); merge patterns by OR-ing values within a field`),
    );
  }
  return list.map((p, i) => {
    // Validate first so the error names the bad path, then measure what Lambda will receive.
    compilePattern(parsePattern(p) as FilterPattern);
    for (const warning of patternWarnings(p)) onWarning(`filter ${i}: ${warning}`);
    const text = JSON.stringify(p);
    if (text.length > MAX_PATTERN_LENGTH) {
      throw new FilterCriteriaError(
        'pattern-too-long',
        `the pattern is ${text.length} characters; Lambda accepts at most ${MAX_PATTERN_LENGTH}`,
        i,
      );
    }
    return text;
  });
}

const readOptions = /* @__PURE__ */ defineOptions<FilterCriteriaOptions>()('toFilterCriteria', {
  maxFilters: { kind: 'integer', min: 1, max: MAX_FILTERS_QUOTA, default: DEFAULT_MAX_FILTERS },
  onWarning: { kind: 'function', default: emitFilterWarning },
});
