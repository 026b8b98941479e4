import { parsePattern } from './compile.js';
import { InvalidPatternError } from './errors.js';
import type { FilterPattern } from './types.js';

/**
 * Filters for a Kinesis event source fed by a table's Kinesis streaming destination. Lambda
 * filters Kinesis records on the `data` key only, decoded from base64 when it is JSON; there the
 * change record has the stream record's fields but eventSourceARN, eventVersion,
 * dynamodb.SequenceNumber and dynamodb.StreamViewType (and its ApproximateCreationDateTime is in
 * milliseconds or microseconds). So a stream pattern becomes `{ data: <pattern> }`, refused when it
 * names a field the change record lacks: Lambda would accept it and it would never match.
 */

const NOT_IN_CHANGE_RECORD: Readonly<Record<string, readonly string[]>> = {
  '': ['eventSourceARN', 'eventVersion'],
  dynamodb: ['SequenceNumber', 'StreamViewType'],
};

function refuseMissing(pattern: Record<string, unknown>, at: string, path: string): void {
  for (const [key, value] of Object.entries(pattern)) {
    if (key === '$or' && Array.isArray(value)) {
      value.forEach((branch, i) => {
        if (branch !== null && typeof branch === 'object')
          refuseMissing(branch as Record<string, unknown>, at, `${path}.$or[${i}]`);
      });
      continue;
    }
    if (NOT_IN_CHANGE_RECORD[at]?.includes(key)) {
      throw new InvalidPatternError(
        'not-supported-by-dynamodb',
        `${path}.${key}`,
        `a Kinesis change record has no ${at === '' ? key : `${at}.${key}`}: the filter would never match`,
      );
    }
    if (
      at === '' &&
      key === 'dynamodb' &&
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value)
    )
      refuseMissing(value as Record<string, unknown>, 'dynamodb', `${path}.dynamodb`);
  }
}

/**
 * The patterns for a Kinesis event source: each stream pattern (builder output, a ready-made one
 * such as ttlDeletes(), or JSON text) nested under `data`. Pass the result to toFilterCriteria /
 * toServerlessFilterPatterns as usual; compileFilterCriteria checks it against kinesisFilterInput.
 */
export function forKinesis(pattern: FilterPattern | string): FilterPattern;
export function forKinesis(patterns: readonly (FilterPattern | string)[]): FilterPattern[];
export function forKinesis(
  input: FilterPattern | string | readonly (FilterPattern | string)[],
): FilterPattern | FilterPattern[] {
  if (Array.isArray(input)) return input.map((p) => forKinesis(p as FilterPattern | string));
  const pattern = parsePattern(input);
  refuseMissing(pattern, '', '$');
  return { data: pattern } as FilterPattern;
}

/**
 * A Lambda Kinesis record as Lambda's filter sees it: `{ data }`, the data decoded from base64 and
 * parsed when it is JSON, else the text as is (no pattern on its fields matches then).
 */
export function kinesisFilterInput(record: unknown): { data: unknown } {
  const data = (record as { kinesis?: { data?: unknown } } | null)?.kinesis?.data;
  if (typeof data !== 'string') return { data };
  const text = Buffer.from(data, 'base64').toString('utf8');
  try {
    return { data: JSON.parse(text) };
  } catch {
    return { data: text };
  }
}
