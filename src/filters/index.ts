export type {
  AttributeFilter,
  BoolTypeFilter,
  IgnoreCaseOption,
  ItemAttributes,
  ListTypeFilter,
  MapTypeFilter,
  NumberTypeFilter,
  PresenceTypeFilter,
  SetTypeFilter,
  StringTypeFilter,
} from './builder.js';
export {
  anyOfPatterns,
  eventNames,
  fieldPattern,
  filterPattern,
  itemAttributes,
  keyAttribute,
  newImageAttribute,
  oldImageAttribute,
  userIdentityPattern,
} from './builder.js';
export { compilePattern, matchesPattern } from './compile.js';
export type { FilterCriteriaOptions } from './criteria.js';
export {
  compileFilterCriteria,
  DEFAULT_MAX_FILTERS,
  MAX_FILTERS_QUOTA,
  MAX_PATTERN_LENGTH,
  toFilterCriteria,
  toServerlessFilterPatterns,
} from './criteria.js';
export type { EntityDiscriminator, EntitySpec } from './entity.js';
export { entity } from './entity.js';
export type { FilterCriteriaReason, InvalidPatternReason } from './errors.js';
export { FilterCriteriaError, InvalidPatternError } from './errors.js';
export { forKinesis, kinesisFilterInput } from './kinesis.js';
export { patternWarnings } from './lint.js';
export { matching } from './matching.js';
export { everyChange, inserts, modifies, removes, ttlDeletes, userDeletes } from './ready-made.js';
export type {
  AttributeName,
  AttributePattern,
  EventMatcher,
  FilterCondition,
  FilterCriteria,
  FilterPattern,
  FilterScalar,
  ImagePattern,
  ItemFilterPattern,
  MatchExpression,
} from './types.js';
