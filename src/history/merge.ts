import type { ArchiveRow } from '../archive/format.js';

/** What the merge needs of an archive object: its key, its shard segment and its first sequence number. */
export interface MergeObject {
  readonly key: string;
  readonly shard: string;
  /** The sequence number of its first row (the key's `<first>`): where it starts in its shard. */
  readonly first: string;
}

/** A row of the merged hour and the object it was read from. */
export interface MergedRow<O extends MergeObject> {
  readonly row: ArchiveRow;
  readonly object: O;
}

/** What a merge has done so far: objects fetched, rows given out or dropped, and the copies among them. */
export interface MergeCounts {
  objects: number;
  rows: number;
  duplicates: number;
}

/**
 * Sequence numbers are digits without leading zeros (the parser checks it for every record an
 * archive holds): a longer one is larger, equal lengths compare as text. No BigInt per row.
 */
export function compareSequence(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

interface Cursor<O> {
  readonly object: O;
  readonly rows: readonly ArchiveRow[];
  at: number;
}

/** Where an hour's shards share their state: the counts, and the Kinesis copies already taken. */
interface HourState {
  readonly counts: MergeCounts;
  /**
   * Kinesis carries a duplicate under another sequence number, so its copies are not adjacent in
   * sequence order: their eventIDs are remembered for the hour (copies share their creation time,
   * so their hour). Bounded by the Kinesis rows of one hour; a DynamoDB stream's rows add nothing.
   */
  readonly kinesisSeen: Set<string>;
}

/**
 * One shard's objects of an hour merged by sequence number: an object is fetched only when the
 * merge reaches its first sequence number and dropped when read to its end, so memory holds the
 * objects that overlap at one point of the shard (one, where no redelivery was cut differently).
 * Copies of a change share (sequence number, eventID) and, merged, come one after another: only
 * the eventIDs at the current sequence number are remembered.
 */
class ShardMerge<O extends MergeObject> {
  private readonly open: Cursor<O>[] = [];
  private lastSequence: string | undefined;
  private readonly lastIds: string[] = [];
  head: MergedRow<O> | undefined;

  constructor(
    private readonly pending: O[],
    private readonly fetch: (object: O) => Promise<readonly ArchiveRow[]>,
    private readonly state: HourState,
  ) {
    // Reading order: by first sequence number; the key fixes the order of equal starts.
    pending.sort((a, b) => compareSequence(b.first, a.first) || (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
  }

  /** The open cursor whose next row comes first (the earlier-opened one on a tie). */
  private least(): Cursor<O> | undefined {
    let best: Cursor<O> | undefined;
    for (const cursor of this.open) {
      if (best === undefined) best = cursor;
      else {
        const a = cursor.rows[cursor.at] as ArchiveRow;
        const b = best.rows[best.at] as ArchiveRow;
        const order = compareSequence(a.sequenceNumber, b.sequenceNumber);
        if (order < 0 || (order === 0 && a.eventID < b.eventID)) best = cursor;
      }
    }
    return best;
  }

  /** Opens every object that starts at or before the least open row: none of its rows may come later. */
  private async fill(): Promise<void> {
    // `pending` is sorted last-first: its end is the next object to open.
    for (;;) {
      const next = this.pending[this.pending.length - 1];
      if (next === undefined) return;
      const least = this.least();
      if (least !== undefined) {
        const head = least.rows[least.at] as ArchiveRow;
        if (compareSequence(next.first, head.sequenceNumber) > 0) return;
      }
      this.pending.pop();
      const rows = await this.fetch(next);
      this.state.counts.objects++;
      if (rows.length > 0) this.open.push({ object: next, rows, at: 0 });
    }
  }

  /** Moves `head` to the next change not taken yet; undefined when the shard's objects are done. */
  async advance(): Promise<void> {
    for (;;) {
      await this.fill();
      const cursor = this.least();
      if (cursor === undefined) {
        this.head = undefined;
        return;
      }
      const row = cursor.rows[cursor.at++] as ArchiveRow;
      if (cursor.at === cursor.rows.length) this.open.splice(this.open.indexOf(cursor), 1);
      if (this.isCopy(row)) {
        this.state.counts.rows++;
        this.state.counts.duplicates++;
        continue;
      }
      this.head = { row, object: cursor.object };
      return;
    }
  }

  private isCopy(row: ArchiveRow): boolean {
    if (row.sequenceNumber !== this.lastSequence) {
      this.lastSequence = row.sequenceNumber;
      this.lastIds.length = 0;
    } else if (this.lastIds.includes(row.eventID)) return true;
    this.lastIds.push(row.eventID);
    if (row.kinesis === undefined) return false;
    if (this.state.kinesisSeen.has(row.eventID)) return true;
    this.state.kinesisSeen.add(row.eventID);
    return false;
  }
}

/** Which of two shards' next rows comes first: creation time, then sequence number, then shard. */
function before(a: ArchiveRow, b: ArchiveRow): boolean {
  if (a.approximateCreationDateTime !== b.approximateCreationDateTime)
    return a.approximateCreationDateTime < b.approximateCreationDateTime;
  const order = compareSequence(a.sequenceNumber, b.sequenceNumber);
  return order !== 0 ? order < 0 : a.shard < b.shard;
}

/**
 * The changes of one hour partition's objects, each once, in the order they happened per item:
 * within a shard by sequence number (each shard's objects merged, copies dropped as they meet),
 * across shards by approximate creation time (an item moves to a child shard when its shard
 * splits; its changes there are later). Each object's own order is kept whatever its neighbours
 * hold. Memory: per shard, the objects overlapping at its current sequence number; the eventIDs
 * at that sequence number; and the eventIDs of the hour's Kinesis rows.
 */
export async function* mergeHour<O extends MergeObject>(
  objects: readonly O[],
  fetch: (object: O) => Promise<readonly ArchiveRow[]>,
  counts: MergeCounts,
): AsyncGenerator<MergedRow<O>> {
  const state: HourState = { counts, kinesisSeen: new Set() };
  const byShard = new Map<string, O[]>();
  for (const object of objects) {
    const list = byShard.get(object.shard);
    if (list === undefined) byShard.set(object.shard, [object]);
    else list.push(object);
  }
  const shards = [...byShard.keys()]
    .sort()
    .map((shard) => new ShardMerge(byShard.get(shard) as O[], fetch, state));
  for (const shard of shards) await shard.advance();
  for (;;) {
    let next: ShardMerge<O> | undefined;
    for (const shard of shards) {
      if (
        shard.head !== undefined &&
        (next === undefined || before(shard.head.row, (next.head as MergedRow<O>).row))
      )
        next = shard;
    }
    if (next === undefined) return;
    // Counted as yielded, not as read ahead: a merge stopped here has taken exactly these rows.
    counts.rows++;
    yield next.head as MergedRow<O>;
    await next.advance();
  }
}
