import { defineOptions, describe } from '../core/options.js';
import { NumberValue } from './number-value.js';
import { FIVE_YEARS_SECONDS } from './ttl-rules.js';
import type { AttributeMap, Item } from './types.js';

/** Why an item will never be deleted by TTL. */
export type TtlProblem =
  | 'missing'
  | 'not-a-number'
  | 'milliseconds'
  | 'microseconds'
  | 'nanoseconds'
  | 'too-far-in-future'
  | 'more-than-5-years-past';

/** checkTtl's verdict: when the item expires, or why DynamoDB never deletes it. */
export type TtlCheck =
  | {
      readonly expires: true;
      /** The TTL, epoch seconds. */
      readonly expiresAt: number;
      /** Already past: TTL will delete the item soon (typically within days), it is not gone yet. */
      readonly due: boolean;
    }
  | {
      readonly expires: false;
      readonly reason: TtlProblem;
      /** One sentence for a warning log: what is wrong and what DynamoDB does with it. */
      readonly message: string;
      /** The attribute's value as found (unmarshalled form or the raw AttributeValue). */
      readonly value: unknown;
    };

/** Options of checkTtl: the time to judge the TTL against. */
export interface CheckTtlOptions {
  /** The time to judge against: a Date or epoch milliseconds (`Date.now()`). Default: now. */
  now?: Date | number;
}

/** Seconds since the epoch of 2500-01-01: no sensible seconds TTL lies beyond it, a ms one always does. */
const YEAR_2500_SECONDS = 16_725_225_600;

/** The single type key of a raw AttributeValue, or undefined when `value` is not one. */
function attributeType(value: object): string | undefined {
  if (Object.getPrototypeOf(value) !== Object.prototype) return undefined;
  const keys = Object.keys(value);
  const type = keys[0]!;
  return keys.length === 1 && (type === 'N' || Object.hasOwn(TYPE_NAMES, type)) ? type : undefined;
}

/** How a message names the type of a TTL that is not a Number (every type key but N). */
const TYPE_NAMES: Record<string, string> = {
  S: 'a String',
  B: 'a Binary',
  SS: 'a String Set',
  NS: 'a Number Set',
  BS: 'a Binary Set',
  M: 'a Map',
  L: 'a List',
  NULL: 'NULL',
  BOOL: 'a Boolean',
};

const readOptions = /* @__PURE__ */ defineOptions<CheckTtlOptions>()('checkTtl', {
  now: {
    kind: 'custom',
    expected: 'a Date or epoch milliseconds',
    check: (now) =>
      (now instanceof Date && !Number.isNaN(now.getTime())) ||
      (typeof now === 'number' && Number.isFinite(now)),
  },
});

function nowSeconds(now: Date | number | undefined): number {
  if (now === undefined) return Date.now() / 1000;
  return (now instanceof Date ? now.getTime() : now) / 1000;
}

/** The attribute's name as messages quote it; only failures pay for it. */
function quoted(ttlAttribute: string): string {
  return JSON.stringify(ttlAttribute);
}

const FINER_UNITS = ['milliseconds', 'microseconds', 'nanoseconds'] as const;

function never(reason: TtlProblem, message: string, value: unknown): TtlCheck {
  return { expires: false, reason, message, value };
}

/**
 * Whether DynamoDB's TTL will ever delete this item. DynamoDB validates nothing: a TTL that is
 * missing, not a Number, in milliseconds (or finer), or more than five years in the past is
 * silently ignored and the item lives forever. Accepts an unmarshalled item or a raw
 * attribute map (e.g. a stream record's `raw.dynamodb.NewImage`).
 */
export function checkTtl(
  image: Item | AttributeMap | undefined,
  ttlAttribute: string,
  options?: CheckTtlOptions,
): TtlCheck {
  if (typeof ttlAttribute !== 'string' || ttlAttribute === '') {
    throw readOptions.fail(
      `argument 'ttlAttribute' must be a non-empty string, got ${describe(ttlAttribute)}`,
    );
  }
  return judgeTtl(image, ttlAttribute, nowSeconds(readOptions(options).now));
}

/**
 * checkTtl without its argument checks, for callers that validated them once (the pipeline judges
 * every INSERT/MODIFY with the same attribute and one `now` per invocation). `now` in epoch seconds.
 * @internal
 */
export function judgeTtl(
  image: Item | AttributeMap | undefined,
  ttlAttribute: string,
  now: number,
): TtlCheck {
  const value = image == null ? undefined : (image as Record<string, unknown>)[ttlAttribute];
  if (value === undefined || value === null) {
    return never(
      'missing',
      `the item has no ${quoted(ttlAttribute)} attribute, so TTL never deletes it`,
      value,
    );
  }
  let seconds: number | undefined;
  let typeName: string | undefined;
  if (typeof value === 'number') seconds = value;
  else if (typeof value === 'bigint') seconds = Number(value);
  else if (value instanceof NumberValue) seconds = value.toNumber();
  else if (typeof value === 'object') {
    const type = attributeType(value);
    if (type === 'N') seconds = Number((value as { N: string }).N);
    else typeName = type === undefined ? 'a Map' : TYPE_NAMES[type];
  } else typeName = typeof value === 'string' ? 'a String' : `a ${typeof value}`;
  if (seconds === undefined || !Number.isFinite(seconds)) {
    const text = typeof value === 'string' ? value : (value as { S?: unknown }).S;
    const hint =
      typeof text === 'string' && text.trim() !== '' && Number.isFinite(Number(text))
        ? ' (the string looks numeric: store it as a Number)'
        : '';
    return never(
      'not-a-number',
      `${quoted(ttlAttribute)} is ${typeName ?? 'not a number'}, and DynamoDB only expires items whose TTL is a Number${hint}`,
      value,
    );
  }
  if (seconds > YEAR_2500_SECONDS) {
    // The finest unit that brings the value back before 2500 (×1000 per step), if any.
    const unit = FINER_UNITS.find((_, i) => seconds / 1000 ** (i + 1) <= YEAR_2500_SECONDS);
    return never(
      unit ?? 'too-far-in-future',
      unit === undefined
        ? `${quoted(ttlAttribute)} = ${seconds} is beyond the year 2500 in epoch seconds: the item effectively never expires`
        : `${quoted(ttlAttribute)} = ${seconds} looks like epoch ${unit}; DynamoDB reads TTL as epoch seconds, so the item never expires`,
      value,
    );
  }
  if (seconds < now - FIVE_YEARS_SECONDS) {
    return never(
      'more-than-5-years-past',
      `${quoted(ttlAttribute)} = ${seconds} is more than five years in the past; DynamoDB ignores such TTLs and never deletes the item`,
      value,
    );
  }
  return { expires: true, expiresAt: seconds, due: seconds <= now };
}
