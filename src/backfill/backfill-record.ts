import type { AttributeMap, LambdaStreamRecord, StreamEventName } from '../records/types.js';
import { InvalidExportLineError } from './errors.js';

/**
 * Where a backfill record comes from, as the record carries it: `eventID` names it
 * (`<data file key>#<line>`, `scan:<segment>#<n>`), so a dead-letter entry says where the item
 * was read, and the same item gets the same eventID on a rerun (an idempotent sink can key on it).
 */
export interface RecordPlace {
  readonly eventID: string;
  /** Digits that order the records of one run: the source's number, then the position in it. */
  readonly sequenceNumber: string;
}

const POSITION_DIGITS = 12;
const SOURCE_DIGITS = 6;

/**
 * A digit-only sequence number: `1`, the source (file or segment) in 6 digits, the position in 12.
 * Fixed width, so they order alike as text and as numbers; the leading 1 keeps the width when a
 * sink reads them as a BigInt. 19 digits: within the 40 a stream's may have.
 */
export function backfillSequenceNumber(source: number, position: number): string {
  return `1${String(source).padStart(SOURCE_DIGITS, '0')}${String(position).padStart(POSITION_DIGITS, '0')}`;
}

export interface BuildContext {
  /** The table's ARN when known: the record's eventSourceARN, so `tableName` reads the table. */
  readonly tableArn: string | undefined;
  readonly region: string | undefined;
}

function record(
  place: RecordPlace,
  eventName: StreamEventName,
  createdSeconds: number,
  keys: AttributeMap | undefined,
  newImage: AttributeMap | undefined,
  oldImage: AttributeMap | undefined,
  context: BuildContext,
): LambdaStreamRecord {
  const dynamodb: Record<string, unknown> = {
    ApproximateCreationDateTime: createdSeconds,
    Keys: keys,
    SequenceNumber: place.sequenceNumber,
    StreamViewType: oldImage === undefined ? 'NEW_IMAGE' : 'NEW_AND_OLD_IMAGES',
  };
  if (newImage !== undefined) dynamodb.NewImage = newImage;
  if (oldImage !== undefined) dynamodb.OldImage = oldImage;
  const out: Record<string, unknown> = {
    eventID: place.eventID,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    dynamodb,
  };
  if (context.region !== undefined) out.awsRegion = context.region;
  if (context.tableArn !== undefined) out.eventSourceARN = context.tableArn;
  return out as unknown as LambdaStreamRecord;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The item's key attributes, as the record's Keys. Undefined when the item lacks one (or is not an
 * attribute map): the record then has no Keys, the parser rejects it (`missing-keys`) and the
 * pipeline dead-letters it with its eventID, which names where it was read.
 */
export function keysOf(item: unknown, keyAttributes: readonly string[]): AttributeMap | undefined {
  if (!isObject(item)) return undefined;
  const keys: AttributeMap = {};
  for (const name of keyAttributes) {
    if (!Object.hasOwn(item, name)) return undefined;
    // Defined, not assigned: a key attribute named `__proto__` is an attribute, not a prototype.
    // Any other name is assigned: defineProperty costs a descriptor object and a slow path per item.
    if (name === '__proto__')
      Object.defineProperty(keys, name, {
        value: item[name],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else keys[name] = item[name] as AttributeMap[string];
  }
  return keys;
}

/** An item of a full export or a scan: an INSERT as of the snapshot, its image the item. */
export function itemRecord(
  item: unknown,
  keyAttributes: readonly string[],
  snapshotSeconds: number,
  place: RecordPlace,
  context: BuildContext,
): LambdaStreamRecord {
  const image = isObject(item) ? (item as AttributeMap) : undefined;
  return record(place, 'INSERT', snapshotSeconds, keysOf(item, keyAttributes), image, undefined, context);
}

/** The view type of an incremental export (manifest-summary.json's `outputView`). */
export type IncrementalView = 'NEW_AND_OLD_IMAGES' | 'NEW_IMAGE';

/** A JSON line of a data file, parsed; a line that is not a JSON object is an InvalidExportLineError. */
export function parseLine(text: string, key: string, line: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidExportLineError(key, line, 'not JSON (a data file holds one JSON object per line)');
  }
  if (!isObject(value)) throw new InvalidExportLineError(key, line, 'not a JSON object');
  return value;
}

/** `{"Item": {...}}`: a full export's line. */
export function fullExportRecord(
  value: Record<string, unknown>,
  keyAttributes: readonly string[],
  snapshotSeconds: number,
  place: RecordPlace,
  context: BuildContext,
): LambdaStreamRecord {
  return itemRecord(value.Item, keyAttributes, snapshotSeconds, place, context);
}

function writeSeconds(value: Record<string, unknown>, fallback: number): number {
  const micros = (value.Metadata as { WriteTimestampMicros?: { N?: unknown } } | undefined)
    ?.WriteTimestampMicros?.N;
  if (typeof micros !== 'string') return fallback;
  // Milliseconds kept: the handoff compares write times with stream records' creation times.
  const ms = Math.floor(Number(micros) / 1000);
  return Number.isFinite(ms) ? ms / 1000 : fallback;
}

/**
 * A line of an incremental export: `Metadata.WriteTimestampMicros`, `Keys`, and the images the
 * view has. NEW_AND_OLD_IMAGES: both images a MODIFY, the new one alone an INSERT, none (or the old
 * one alone) a REMOVE. NEW_IMAGE cannot tell a new item from a changed one: a new image is a
 * MODIFY without OldImage (as a NEW_IMAGE stream sends a change), no image a REMOVE. A REMOVE is a
 * user delete: the export does not say whether TTL deleted the item.
 */
export function incrementalRecord(
  value: Record<string, unknown>,
  view: IncrementalView,
  fallbackSeconds: number,
  place: RecordPlace,
  context: BuildContext,
): LambdaStreamRecord {
  const keys = isObject(value.Keys) ? (value.Keys as AttributeMap) : undefined;
  const newImage = isObject(value.NewImage) ? (value.NewImage as AttributeMap) : undefined;
  const oldImage = isObject(value.OldImage) ? (value.OldImage as AttributeMap) : undefined;
  const seconds = writeSeconds(value, fallbackSeconds);
  if (newImage === undefined) return record(place, 'REMOVE', seconds, keys, undefined, oldImage, context);
  if (oldImage !== undefined) return record(place, 'MODIFY', seconds, keys, newImage, oldImage, context);
  return record(
    place,
    view === 'NEW_IMAGE' ? 'MODIFY' : 'INSERT',
    seconds,
    keys,
    newImage,
    undefined,
    context,
  );
}

/** What every line of one data file shares: where the records say they come from, and how to read a line. */
export interface DataFileLines {
  readonly key: string;
  /** The file's number in its export: the sequence numbers' source part. */
  readonly fileIndex: number;
  readonly incremental: boolean;
  readonly view: IncrementalView;
  readonly keyAttributes: readonly string[];
  /** The export's time: a full export's records' creation time, an incremental line's fallback. */
  readonly snapshotSeconds: number;
  readonly context: BuildContext;
}

/** The record a data file's (non-empty) line becomes; a line that is not a JSON object is an InvalidExportLineError. */
export function exportLineRecord(file: DataFileLines, text: string, line: number): LambdaStreamRecord {
  const value = parseLine(text, file.key, line);
  const place = {
    eventID: `${file.key}#${line}`,
    sequenceNumber: backfillSequenceNumber(file.fileIndex, line),
  };
  return file.incremental
    ? incrementalRecord(value, file.view, file.snapshotSeconds, place, file.context)
    : fullExportRecord(value, file.keyAttributes, file.snapshotSeconds, place, file.context);
}
