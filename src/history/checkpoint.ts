import { readCheckpointJson } from '../backfill/checkpoint.js';
import { CheckpointMismatchError, InvalidCheckpointError } from '../backfill/errors.js';
import { compareSequence } from './merge.js';

/**
 * How far one shard of the hour in progress is: its changes up to `sequence` are done, and at
 * `sequence` itself those with these eventIDs (a stand-in shard segment, `stream-<label>`, holds
 * several shards whose sequence numbers may meet).
 */
export interface ShardPosition {
  sequence: string;
  eventIDs: string[];
}

/**
 * A replay's checkpoint: which replay it is for (`source`: bucket, prefix, table, range, tenant,
 * keys) and how far it is — every hour before `hour` is done, and in `hour` each shard up to its
 * position. A position is a place in the shard's own order (sequence numbers), so a resumed run
 * skips exactly what was done even if the hour's objects were compacted in between.
 */
export interface ReplayCheckpoint {
  version: 1;
  source: string;
  /** The hour in progress, `YYYY-MM-DDTHH`; null before the first batch. */
  hour: string | null;
  shards: Record<string, ShardPosition>;
  /** Every hour of the range is done. */
  complete: boolean;
}

const VERSION = 1;
const HOUR = /^\d{4}-\d{2}-\d{2}T\d{2}$/;
const SEQUENCE = /^(0|[1-9]\d{0,128})$/;
const MAX_IDS_AT_ONE_SEQUENCE = 10_000;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isPosition(v: unknown): v is ShardPosition {
  return (
    isPlainObject(v) &&
    typeof v.sequence === 'string' &&
    SEQUENCE.test(v.sequence) &&
    Array.isArray(v.eventIDs) &&
    v.eventIDs.length <= MAX_IDS_AT_ONE_SEQUENCE &&
    v.eventIDs.every((id) => typeof id === 'string')
  );
}

/** The checkpoint in `value` (parsed JSON), every field checked before anything is delivered. */
function checked(value: unknown, file: string): ReplayCheckpoint {
  if (
    !isPlainObject(value) ||
    value.version !== VERSION ||
    typeof value.source !== 'string' ||
    typeof value.complete !== 'boolean' ||
    !(value.hour === null || (typeof value.hour === 'string' && HOUR.test(value.hour))) ||
    !isPlainObject(value.shards)
  )
    throw new InvalidCheckpointError(file, `not an archive replay's checkpoint (version ${VERSION})`);
  // Names come from the file: `__proto__` must be an entry like any other, never a prototype.
  const shards: Record<string, ShardPosition> = Object.create(null);
  for (const [name, position] of Object.entries(value.shards)) {
    if (!isPosition(position))
      throw new InvalidCheckpointError(
        file,
        `shard entry ${JSON.stringify(name.slice(0, 200))} is not one a replay writes`,
      );
    shards[name] = { sequence: position.sequence, eventIDs: [...position.eventIDs] };
  }
  if (value.hour === null && Object.keys(shards).length > 0)
    throw new InvalidCheckpointError(file, 'shard positions without an hour');
  return { version: VERSION, source: value.source, hour: value.hour, shards, complete: value.complete };
}

/**
 * The checkpoint a replay continues from: the file's when it is this replay's (the same source,
 * its hour inside [fromMs, toMs)), a fresh one when there is no file. Anything else is refused
 * before any delivery: InvalidCheckpointError, CheckpointMismatchError.
 */
export async function openReplayCheckpoint(
  file: string | undefined,
  source: string,
  range: { fromMs: number; toMs: number },
): Promise<ReplayCheckpoint> {
  const value = file === undefined ? undefined : await readCheckpointJson(file);
  if (file === undefined || value === undefined)
    return { version: VERSION, source, hour: null, shards: Object.create(null), complete: false };
  const checkpoint = checked(value, file);
  if (checkpoint.source !== source)
    throw new CheckpointMismatchError(file, `it is the checkpoint of ${checkpoint.source}, not of ${source}`);
  if (checkpoint.hour !== null) {
    const start = hourStart(checkpoint.hour);
    if (!(start + 3_600_000 > range.fromMs && start < range.toMs))
      throw new InvalidCheckpointError(file, `hour ${checkpoint.hour} is outside the replay's range`);
  }
  return checkpoint;
}

/** Epoch milliseconds of an hour label's start. */
export function hourStart(hour: string): number {
  return Date.parse(`${hour}:00:00Z`);
}

/** Whether the checkpoint says this change of the hour in progress is done. */
export function isDone(position: ShardPosition | undefined, sequence: string, eventID: string): boolean {
  if (position === undefined) return false;
  const order = compareSequence(sequence, position.sequence);
  return order < 0 || (order === 0 && position.eventIDs.includes(eventID));
}

/** Moves a shard's position past one delivered change (changes of a shard come in sequence order). */
export function advancePosition(
  shards: Record<string, ShardPosition>,
  shard: string,
  sequence: string,
  eventID: string,
): void {
  const position = shards[shard];
  if (position !== undefined && position.sequence === sequence) position.eventIDs.push(eventID);
  else shards[shard] = { sequence, eventIDs: [eventID] };
}
