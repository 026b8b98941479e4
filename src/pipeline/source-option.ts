// The `source` option's key and reader rule, on their own (as validated-key.ts is) so the compiler
// and the window handler read the option without linking the Kinesis stages kinesisSource() holds.

import { isMarked } from './marked.js';

// Symbol.for: a source made by another copy of tidewater (a bundled handler) is still recognized.
export const KINESIS_SOURCE: unique symbol = Symbol.for('tidewater.kinesisSource');

/**
 * The reader rule of `source`: `'kinesis'` and `'auto'` are refused naming the call that takes
 * their place, at configuration time rather than at the first batch.
 */
export const SOURCE_OPTION = {
  kind: 'custom',
  expected:
    "'dynamodb-stream' or kinesisSource() (import { kinesisSource } from 'tidewater'; " +
    "'kinesis' is kinesisSource(), 'auto' kinesisSource({ alsoDynamoDBStream: true }))",
  check: (value: unknown) => value === 'dynamodb-stream' || isMarked(value, KINESIS_SOURCE),
  default: 'dynamodb-stream',
} as const;
