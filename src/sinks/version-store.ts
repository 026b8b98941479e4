import type { RecordVersion } from './record-version.js';

/**
 * Where a version guard keeps, per item key, the version of the state its sink holds. A delete's
 * version stays as a tombstone, so a backfill copy older than the delete cannot bring the item
 * back (docs/backfill.md says how long tombstones must be kept). A key is an item's KeyIdentity
 * (itemKeyOf): the guard names an item by its keys' value, so a store compares keys as they are.
 */
export interface VersionStore {
  /** The versions held for these keys (a key without one is absent from the map). Consistent reads. */
  get(keys: readonly string[]): Promise<ReadonlyMap<string, RecordVersion>>;
  /**
   * Records `version` for `key` if the key has none or an older one, atomically; false when a
   * version as new or newer is held (nothing changed). `deleted` marks a tombstone.
   */
  commit(key: string, version: RecordVersion, deleted: boolean): Promise<boolean>;
}
