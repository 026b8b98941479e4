import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { CorruptCounterError, InvalidVoteError } from './errors.js';

/** DynamoDB numbers carry 38 significant digits; a count must fit. */
const MAX_DIGITS = 38;
const WHOLE = /^(0|[1-9][0-9]*)$/;

/**
 * A vote weight as DynamoDB number text. Counts only grow (no decrements): that is what lets the
 * aggregator order two totals by value alone.
 */
export function voteCountText(count: unknown): string {
  if (typeof count === 'bigint') {
    if (count < 1n) throw new InvalidVoteError('count', `must be positive, got ${count}`);
    const text = count.toString();
    if (text.length > MAX_DIGITS)
      throw new InvalidVoteError('count', `must have at most ${MAX_DIGITS} digits`);
    return text;
  }
  if (typeof count === 'number' && Number.isSafeInteger(count) && count >= 1) return String(count);
  throw new InvalidVoteError('count', `must be a positive safe integer or a bigint, got ${String(count)}`);
}

/**
 * Reads a counter attribute exactly: the N text goes straight to BigInt, never through Number.
 * An absent attribute is 0 (a shard nobody voted on yet).
 */
export function readCount(value: AttributeValue | undefined, pk: string, sk: string): bigint {
  if (value === undefined) return 0n;
  const text = value.N;
  if (text === undefined) throw new CorruptCounterError(pk, sk, 'attribute is not of type N');
  // DynamoDB normalises numbers, but an item written by other code may say "1E+3" or "5.0".
  if (!WHOLE.test(text)) throw new CorruptCounterError(pk, sk, `value ${text} is not a whole number`);
  return BigInt(text);
}
