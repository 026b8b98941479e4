import type { ClassifiedRecord } from '../records/types.js';
import { compilePattern } from './compile.js';
import type { FilterPattern, ItemFilterPattern } from './types.js';

/**
 * A pipeline route condition from a Lambda filter pattern: `route({ when: matching(pattern), … })`.
 * The pattern is validated and compiled here, once, and matched against each record as Lambda
 * delivers it (`record.raw`), so it selects what the same pattern on the event source mapping
 * would. A predicate rather than a pattern the pipeline compiles: a handler without pattern routes
 * then never loads the filter compiler. Throws InvalidPatternError.
 */
export function matching(pattern: FilterPattern | string): (record: ClassifiedRecord) => boolean;
/** `matching<Order>(pattern)`: the pattern's attribute names are checked against Order's fields. */
export function matching<T extends object>(
  pattern: ItemFilterPattern<T>,
): (record: ClassifiedRecord) => boolean;
export function matching(
  pattern: FilterPattern | ItemFilterPattern<object> | string,
): (record: ClassifiedRecord) => boolean {
  const matches = compilePattern(pattern as FilterPattern);
  return (record) => matches(record.raw);
}
