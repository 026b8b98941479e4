import type { ClassifiedRecord } from '../records/types.js';
import {
  chunkRows,
  encodeObject,
  groupByPartition,
  objectKey,
  objectTag,
  type TenantSplit,
  type UnplacedRecord,
} from './format.js';

/** Layout settings shared by the S3 and file archive sinks, resolved once per sink. */
export interface ArchiveLayout {
  prefix: string;
  ttlAttribute: string;
  maxObjectBytes: number;
  table: string | undefined;
  /** Set when the archive is partitioned by tenant (the sinks' `partitionBy` option). */
  tenants?: TenantSplit | undefined;
}

export interface PlannedObject {
  key: string;
  body: Buffer;
  sha256: string;
  first: string;
  last: string;
  count: number;
  records: ClassifiedRecord[];
}

/** 16 MiB of NDJSON before gzip: large enough to keep PUTs rare, small enough for a 256 MB Lambda. */
export const DEFAULT_MAX_OBJECT_BYTES = 16 * 1024 * 1024;

/**
 * Turns a batch into the objects to write: one per (table, hour, tenant, shard) group, cut by
 * size; `overflow` counts records over the tenant bound, filed unpartitioned. The
 * result is a pure function of the records, so a redelivered batch produces the same keys and bytes.
 */
export function planArchiveObjects(
  records: readonly ClassifiedRecord[],
  layout: ArchiveLayout,
): { objects: PlannedObject[]; failed: UnplacedRecord[]; overflow: number } {
  const { groups, failed, overflow } = groupByPartition(records, layout.table, layout.tenants);
  const objects: PlannedObject[] = [];
  for (const { partition, records: groupRecords, tenants } of groups.values()) {
    for (const chunk of chunkRows(
      groupRecords,
      partition,
      layout.ttlAttribute,
      layout.maxObjectBytes,
      failed,
      tenants,
    )) {
      const { body, sha256 } = encodeObject(chunk.lines);
      const tag = objectTag(partition.shard, (chunk.records[0] as ClassifiedRecord).eventID);
      objects.push({
        key: objectKey(layout.prefix, partition, chunk.first, chunk.last, tag),
        body,
        sha256,
        first: chunk.first,
        last: chunk.last,
        count: chunk.count,
        records: chunk.records,
      });
    }
  }
  return { objects, failed, overflow };
}
