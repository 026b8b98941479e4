import { sha256Hex } from '../core/digest.js';
import { type ArchivePartition, type ArchiveRow, archiveRowId } from './format.js';
import { recordTenantSegment, type TenantPartitioner } from './partition.js';
import { rowToRecord } from './read-archive.js';
import { type ObjectEncoder, type RewrittenObject, rewrittenObject } from './rewritten-object.js';

/** One object of an hour partition, read. */
export interface CompactionSource {
  key: string;
  /** The object's tenant segment; undefined for an unpartitioned object. */
  tenant: string | undefined;
  shard: string;
  rows: readonly ArchiveRow[];
}

/** Where the hour is and how its objects are cut. */
export interface CompactionLayout {
  prefix: string;
  table: string;
  dt: string;
  hour: string;
  /** Bound on one object's NDJSON bytes before gzip, as the sinks' `maxObjectBytes`. */
  maxObjectBytes: number;
  /** Places the rows of unpartitioned objects in their tenant's objects. */
  partitionBy?: TenantPartitioner | undefined;
  /** How the outputs are encoded. Default NDJSON+gzip (NDJSON_ENCODER). */
  encoder?: ObjectEncoder | undefined;
}

export interface CompactionOutput extends RewrittenObject {
  tenant: string | undefined;
  shard: string;
}

/** What compaction will write for one hour: its outputs and the rows read. */
export interface CompactionPlan {
  outputs: CompactionOutput[];
  rowsRead: number;
  /** Copies of a row already taken (overlapping redeliveries): not written again. */
  duplicates: number;
  rowsWritten: number;
  /** Rows of unpartitioned objects that `partitionBy` could not place: they stay unpartitioned. */
  unassigned: number;
  /** Hex SHA-256 of the written rows' ids (`shard/sequenceNumber/eventID`), sorted, one per line. */
  rowSetSha256: string;
}

interface Placed {
  row: ArchiveRow;
  sequence: bigint;
  line: string;
}

function byStreamOrder(a: Placed, b: Placed): number {
  if (a.sequence !== b.sequence) return a.sequence < b.sequence ? -1 : 1;
  // Equal sequence numbers of two shards under one stand-in segment: the eventID fixes the order.
  return a.row.eventID < b.row.eventID ? -1 : a.row.eventID > b.row.eventID ? 1 : 0;
}

/**
 * The objects an hour partition compacts to: every (shard, sequenceNumber, eventID) once, each
 * (tenant, shard) group in stream order, cut at `maxObjectBytes`. A pure function of the rows
 * read, so a run repeated after a crash plans the same keys and bytes: each key carries a hash
 * of its body, and a key already stored holds exactly that body. Tenant objects are taken before
 * unpartitioned ones, so a row stored both ways stays with its tenant.
 */
export function planCompaction(
  sources: readonly CompactionSource[],
  layout: CompactionLayout,
): CompactionPlan {
  const ordered = [...sources].sort(
    (a, b) => Number(a.tenant === undefined) - Number(b.tenant === undefined) || (a.key < b.key ? -1 : 1),
  );
  const seen = new Map<string, Placed>();
  const groups = new Map<string, { tenant: string | undefined; shard: string; rows: Placed[] }>();
  let rowsRead = 0;
  let duplicates = 0;
  let unassigned = 0;
  for (const source of ordered) {
    for (const row of source.rows) {
      rowsRead++;
      const id = archiveRowId(row);
      const kept = seen.get(id);
      if (kept !== undefined) {
        duplicates++;
        // Copies of a row differ in one field only: `tenant`, which rows written before it existed
        // (or without partitionBy) lack. The copy that has it is kept, whichever was read first,
        // so the plan stays a function of the rows read and not of their order.
        if (kept.row.tenant === undefined && row.tenant !== undefined) {
          kept.row = row;
          kept.line = `${JSON.stringify(row)}\n`;
        }
        continue;
      }
      let tenant = source.tenant;
      if (tenant === undefined && layout.partitionBy !== undefined) {
        try {
          tenant = recordTenantSegment(layout.partitionBy, rowToRecord(row));
        } catch {
          unassigned++; // kept, unpartitioned: compaction never drops a row it cannot place
        }
      }
      const groupId = `${tenant ?? ''}/${source.shard}`;
      let group = groups.get(groupId);
      if (group === undefined) {
        group = { tenant, shard: source.shard, rows: [] };
        groups.set(groupId, group);
      }
      const placed: Placed = { row, sequence: BigInt(row.sequenceNumber), line: `${JSON.stringify(row)}\n` };
      seen.set(id, placed);
      group.rows.push(placed);
    }
  }

  const outputs: CompactionOutput[] = [];
  for (const groupId of [...groups.keys()].sort()) {
    const group = groups.get(groupId) as { tenant: string | undefined; shard: string; rows: Placed[] };
    group.rows.sort(byStreamOrder);
    const partition: ArchivePartition = {
      table: layout.table,
      dt: layout.dt,
      hour: layout.hour,
      shard: group.shard,
    };
    if (group.tenant !== undefined) partition.tenant = group.tenant;
    for (const chunk of cutBySize(group.rows, layout.maxObjectBytes)) {
      const object = rewrittenObject(
        layout.prefix,
        partition,
        { rows: chunk.map((p) => p.row), lines: chunk.map((p) => p.line) },
        {
          first: (chunk[0] as Placed).row.sequenceNumber,
          last: (chunk[chunk.length - 1] as Placed).row.sequenceNumber,
        },
        layout.encoder,
      );
      outputs.push({ ...object, tenant: group.tenant, shard: group.shard });
    }
  }
  return {
    outputs,
    rowsRead,
    duplicates,
    rowsWritten: seen.size,
    unassigned,
    rowSetSha256: rowSetSha256(seen.keys()),
  };
}

/** The hex SHA-256 a plan reports for a set of row ids (sorted here). */
export function rowSetSha256(ids: Iterable<string>): string {
  const sorted = [...ids].sort();
  return sha256Hex(sorted.length === 0 ? '' : `${sorted.join('\n')}\n`);
}

/** Consecutive runs of at most `maxBytes` (UTF-8) each; a single larger line stands alone. */
function cutBySize(rows: readonly Placed[], maxBytes: number): Placed[][] {
  const chunks: Placed[][] = [];
  let current: Placed[] = [];
  let size = 0;
  for (const placed of rows) {
    const bytes = Buffer.byteLength(placed.line);
    if (current.length > 0 && size + bytes > maxBytes) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(placed);
    size += bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
