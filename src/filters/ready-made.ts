import { TTL_IDENTITY_TYPE, TTL_PRINCIPAL } from '../records/ttl-rules.js';
import type { FilterPattern } from './types.js';

/**
 * Ready-made patterns. Each is a fresh object, so callers may extend it without affecting others.
 *
 * TTL deletes are REMOVE records carrying `userIdentity { type: "Service", principalId:
 * "dynamodb.amazonaws.com" }` — the same rule classifyRecord applies. The eventName condition
 * adds no cost and keeps the filter equal to the classifier even if DynamoDB ever marks another
 * kind of record with its service identity.
 */
export function ttlDeletes(): FilterPattern {
  return {
    eventName: ['REMOVE'],
    userIdentity: { type: [TTL_IDENTITY_TYPE], principalId: [TTL_PRINCIPAL] },
  };
}

/**
 * REMOVE records that are not TTL deletes. A user delete usually has no userIdentity at all, so
 * "not TTL" is "principalId is anything but DynamoDB's, or there is no principalId": anything-but
 * alone would drop them, because anything-but needs a value to be present. Both conditions sit in
 * one list (OR), so no `$or` is needed — only operators Lambda documents.
 */
export function userDeletes(): FilterPattern {
  return {
    eventName: ['REMOVE'],
    userIdentity: { principalId: [{ 'anything-but': [TTL_PRINCIPAL] }, { exists: false }] },
  };
}

/** A filter pattern matching INSERT records. */
export function inserts(): FilterPattern {
  return { eventName: ['INSERT'] };
}

/** A filter pattern matching MODIFY records. */
export function modifies(): FilterPattern {
  return { eventName: ['MODIFY'] };
}

/** Every REMOVE, TTL or not. */
export function removes(): FilterPattern {
  return { eventName: ['REMOVE'] };
}

/**
 * Every change: INSERT, MODIFY and REMOVE (TTL or not). What a change log's function lets through
 * beside narrower patterns — filter patterns are ORed, so `[ttlDeletes(), everyChange()]` is every
 * record — and, unlike no filter at all, it still names what the function expects.
 */
export function everyChange(): FilterPattern {
  return { eventName: ['INSERT', 'MODIFY', 'REMOVE'] };
}
