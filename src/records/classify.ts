import { defineOptions } from '../core/options.js';
import { MalformedRecordError } from './errors.js';
import { FIVE_YEARS_SECONDS, TTL_IDENTITY_TYPE, TTL_PRINCIPAL } from './ttl-rules.js';
import type { RecordKind } from './types.js';

/**
 * Opt-in inference for TTL deletes that arrive without userIdentity: on a global table only the
 * region whose TTL process deleted the item marks the REMOVE; replicas receive a plain REMOVE.
 * With this on, a REMOVE without userIdentity whose OldImage TTL (epoch seconds) is at or before
 * the record's creation time, and not more than five years before it, counts as a TTL delete.
 * It misclassifies a user delete of an item that had already expired but was not yet swept,
 * which is why it is off by default. Needs OldImage (OLD_IMAGE or NEW_AND_OLD_IMAGES).
 */
export interface TtlHeuristicOptions {
  /** The table's TTL attribute name. */
  ttlAttribute: string;
}

/** Options of classifyRecord: the TTL-delete heuristic for records without userIdentity. */
export interface ClassifyOptions {
  ttlHeuristic?: TtlHeuristicOptions | false;
}

/** The `ttlHeuristic` option's rule: its members are read by heuristicAttribute. */
export const TTL_HEURISTIC_OPTION = {
  kind: 'custom',
  expected: '{ ttlAttribute } or false',
  check: (v: unknown) => v === false || (v !== null && typeof v === 'object' && !Array.isArray(v)),
} as const;

const readHeuristic = /* @__PURE__ */ defineOptions<TtlHeuristicOptions>()('ttlHeuristic', {
  ttlAttribute: { kind: 'nonEmptyString', required: true },
});
const readOptions = /* @__PURE__ */ defineOptions<ClassifyOptions>()('classifyRecord', {
  ttlHeuristic: TTL_HEURISTIC_OPTION,
});

/** The TTL attribute to use for the heuristic (an option TTL_HEURISTIC_OPTION accepted), or undefined when it is off. */
export function heuristicAttribute(
  option: TtlHeuristicOptions | false | undefined,
  where: string,
): string | undefined {
  if (option === undefined || option === false) return undefined;
  return readHeuristic(option, where, 'ttlHeuristic.').ttlAttribute;
}

interface IdentityLike {
  type?: unknown;
  principalId?: unknown;
  Type?: unknown;
  PrincipalId?: unknown;
}

interface RecordLike {
  eventID?: unknown;
  eventName?: unknown;
  userIdentity?: IdentityLike;
  UserIdentity?: IdentityLike;
  dynamodb?: {
    ApproximateCreationDateTime?: unknown;
    SequenceNumber?: unknown;
    OldImage?: Record<string, { N?: unknown } | undefined>;
  };
}

function creationSeconds(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (value instanceof Date) return value.getTime() / 1000;
  return undefined;
}

function looksLikeTtlDelete(record: RecordLike, ttlAttribute: string): boolean {
  const created = creationSeconds(record.dynamodb?.ApproximateCreationDateTime);
  const text = record.dynamodb?.OldImage?.[ttlAttribute]?.N;
  if (created === undefined || typeof text !== 'string') return false;
  const ttl = Number(text);
  return Number.isFinite(ttl) && ttl <= created && ttl >= created - FIVE_YEARS_SECONDS;
}

/**
 * Hot path: the record's shape was checked by the caller. Accepts either wire shape
 * (`userIdentity.principalId` from Lambda, `userIdentity.PrincipalId` from GetRecords).
 */
export function classify(record: RecordLike, ttlAttribute: string | undefined): RecordKind | undefined {
  switch (record.eventName) {
    case 'INSERT':
      return 'insert';
    case 'MODIFY':
      return 'modify';
    case 'REMOVE': {
      // The SDK's GetRecords output names it userIdentity too, with PascalCase members.
      const identity = record.userIdentity ?? record.UserIdentity;
      if (identity != null) {
        const type = identity.type ?? identity.Type;
        const principal = identity.principalId ?? identity.PrincipalId;
        return type === TTL_IDENTITY_TYPE && principal === TTL_PRINCIPAL ? 'ttl-delete' : 'user-delete';
      }
      return ttlAttribute !== undefined && looksLikeTtlDelete(record, ttlAttribute)
        ? 'ttl-delete'
        : 'user-delete';
    }
    default:
      return undefined;
  }
}

/**
 * insert / modify / user-delete / ttl-delete. A TTL delete is a REMOVE whose userIdentity is
 * `{ type: "Service", principalId: "dynamodb.amazonaws.com" }`; every other REMOVE is a user
 * delete unless the opt-in ttlHeuristic says otherwise. Throws MalformedRecordError for an
 * unknown eventName.
 */
export function classifyRecord(raw: unknown, options?: ClassifyOptions): RecordKind {
  const ttlAttribute = heuristicAttribute(readOptions(options).ttlHeuristic, 'classifyRecord');
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new MalformedRecordError('not-an-object', 'a stream record must be an object', {});
  }
  const record = raw as RecordLike;
  const kind = classify(record, ttlAttribute);
  if (kind === undefined) {
    throw new MalformedRecordError(
      'unknown-event-name',
      `eventName must be INSERT, MODIFY or REMOVE, got ${JSON.stringify(record.eventName)}`,
      identityOf(record),
    );
  }
  return kind;
}

export function identityOf(record: RecordLike): {
  eventID: string | undefined;
  sequenceNumber: string | undefined;
} {
  const eventID = typeof record.eventID === 'string' ? record.eventID : undefined;
  const seq = record.dynamodb?.SequenceNumber;
  return { eventID, sequenceNumber: typeof seq === 'string' ? seq : undefined };
}
