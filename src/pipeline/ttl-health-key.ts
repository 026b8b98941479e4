// The key ttlHealth() keeps its check under, and the reader rule of `ttlAttribute`, on their own
// (as validated-key.ts) so the config vocabulary and the compiler name them without linking the check.

import { isMarked } from './marked.js';

// Symbol.for: a check made by another copy of tidewater (a bundled handler) is still recognized.
export const TTL_HEALTH: unique symbol = Symbol.for('tidewater.ttlHealth');

/** The reader rule of `ttlAttribute`: a bare attribute name is refused naming the call that takes it. */
export const TTL_HEALTH_OPTION = {
  kind: 'custom',
  expected:
    "a TTL health check made by ttlHealth() (import { ttlHealth } from 'tidewater'; ttlAttribute: ttlHealth('expiresAt')), " +
    'which links the check into the handler',
  check: (value: unknown) => isMarked(value, TTL_HEALTH),
} as const;
