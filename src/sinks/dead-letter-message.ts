import { sha256Hex } from '../core/digest.js';
import type { DeadLetterEntry } from './types.js';

export const DEAD_LETTER_TYPE = 'tidewater.dead-letter';
export const DEAD_LETTER_POINTER_TYPE = 'tidewater.dead-letter.pointer';

/** A record may be in the SDK shape (Uint8Array binaries) or hold bigint / Set values: JSON has none of those. */
function jsonSafe(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Set) return [...value];
  if (value instanceof Map) return Object.fromEntries(value);
  return value;
}

/**
 * SQS accepts only #x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF in a body; anything
 * else gets the message refused (InvalidMessageContents) or, per newer documentation, replaced
 * by U+FFFD — a lost send or a corrupted copy of the record either way. JSON.stringify already
 * escapes control characters and lone surrogates but leaves the noncharacters U+FFFE and U+FFFF
 * raw, and a DynamoDB string may hold them: escaped, the JSON means exactly the same.
 */
const SQS_REFUSED = /[\uFFFE\uFFFF]/g;

function sqsSafe(json: string): string {
  return json.replace(SQS_REFUSED, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

/**
 * Levels of a record kept in an entry: far below DynamoDB's 32, far short of where
 * JSON.stringify runs out of stack. Only a corrupted record is deeper.
 */
const MAX_ENTRY_DEPTH = 100;
const CUT = `[nested deeper than ${MAX_ENTRY_DEPTH} levels: cut]`;

/** A copy of `value` with everything below `depth` more levels replaced by CUT. */
function cut(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  if (depth === 0) return CUT;
  if (Array.isArray(value)) return value.map((v) => cut(v, depth - 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = cut(v, depth - 1);
  return out;
}

/**
 * The JSON document a dead-letter entry is stored as (SQS body or S3 object). A record too deeply
 * nested to serialize (a corrupted image: DynamoDB nests 32 levels) is kept to its first 100
 * levels, the rest replaced by a marker, so the entry can still be stored.
 */
export function serializeDeadLetterEntry(entry: DeadLetterEntry): string {
  let json: string;
  try {
    json = JSON.stringify({ type: DEAD_LETTER_TYPE, version: 1, ...entry }, jsonSafe);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    json = JSON.stringify(
      { type: DEAD_LETTER_TYPE, version: 1, ...entry, record: cut(entry.record, MAX_ENTRY_DEPTH) },
      jsonSafe,
    );
  }
  return sqsSafe(json);
}

/** What an SQS message says in place of an entry too large for SQS: where the full entry is. */
export function serializeDeadLetterPointer(
  entry: DeadLetterEntry,
  bucket: string,
  key: string,
  bytes: number,
): string {
  const { record: _record, ...rest } = entry;
  return sqsSafe(
    JSON.stringify({ type: DEAD_LETTER_POINTER_TYPE, version: 1, ...rest, bucket, key, bytes }, jsonSafe),
  );
}

/** Stable per entry identity, so a re-sent entry gets the same S3 key / FIFO deduplication id. */
export function entryIdentity(entry: DeadLetterEntry, body: string): string {
  if (entry.sequenceNumber !== undefined || entry.eventID !== undefined) {
    return `${entry.sequenceNumber ?? 'no-sequence'}-${entry.eventID ?? 'no-event-id'}`;
  }
  // Nothing identifies a malformed record but its content (as stored, for one too deep to serialize).
  let recordOnly: string;
  try {
    recordOnly = JSON.stringify(entry.record, jsonSafe) ?? body;
  } catch {
    recordOnly = body;
  }
  return `sha256-${sha256Hex(recordOnly).slice(0, 32)}`;
}

export function deduplicationId(entry: DeadLetterEntry, body: string): string {
  return sha256Hex(`${entry.reason}\n${entry.eventSourceARN ?? ''}\n${entryIdentity(entry, body)}`);
}

export function entryLabel(entry: DeadLetterEntry): string {
  return entry.sequenceNumber ?? entry.eventID ?? '?';
}

export interface SqsMessagePlan {
  entry: DeadLetterEntry;
  body: string;
  bytes: number;
}

/**
 * Cuts messages into SendMessageBatch calls: at most 10 entries and `maxBytes` in total per call
 * (SQS limits the batch payload like a single message). Order is kept.
 */
export function planSqsBatches(messages: readonly SqsMessagePlan[], maxBytes: number): SqsMessagePlan[][] {
  const batches: SqsMessagePlan[][] = [];
  let current: SqsMessagePlan[] = [];
  let size = 0;
  for (const message of messages) {
    if (current.length === 10 || (current.length > 0 && size + message.bytes > maxBytes)) {
      batches.push(current);
      current = [];
      size = 0;
    }
    current.push(message);
    size += message.bytes;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
