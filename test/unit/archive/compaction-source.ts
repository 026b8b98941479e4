import type { CompactionSource } from '../../../src/archive/compaction-plan.js';
import { decodeObject, parseArchiveKey } from '../../../src/archive/format.js';

/** An object a sink planned, as compaction reads it back: its key's tenant and shard, its rows. */
export function compactionSource(object: { key: string; body: Buffer }): CompactionSource {
  const parts = parseArchiveKey(object.key)!;
  return {
    key: object.key,
    tenant: parts.tenant,
    shard: parts.shard,
    rows: decodeObject(object.body, object.key),
  };
}
