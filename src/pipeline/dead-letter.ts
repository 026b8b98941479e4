import { eventIdOf } from '../records/raw-identity.js';
import type { DeadLetterSendError } from '../sinks/errors.js';
import type { DeadLetterEntry, ImageIssue } from '../sinks/types.js';
import {
  contextOf,
  dueDeadLetters,
  fail,
  type GivenUp,
  indexOf,
  type Ledger,
  loggerOf,
  seq,
} from './ledger.js';

/**
 * The last stage: send the dead letters of records before the cut-off, in stream order, in one
 * call. When the sink says which entries it did not store (DeadLetterSendError), the batch fails
 * from the first of those and the entries before it count as sent: their records are done, so
 * Lambda never redelivers them (a record redelivered after its dead letter was stored could be
 * written by a sink that has recovered, and then have both). Any other error fails them all.
 */
export async function sendDeadLetters(ledger: Ledger): Promise<void> {
  const due = dueDeadLetters(ledger);
  if (due === undefined) return;
  const entries = due.map((given) => deadLetterEntry(ledger, given));
  const indices = due.map((given) => given.index);
  let sent = entries.length;
  try {
    await ledger.config.deadLetter!.send(entries, contextOf(ledger));
  } catch (error) {
    const from = firstUnsent(ledger, indices, error);
    sent = indices.findIndex((i) => i >= from);
    loggerOf(ledger).error(
      { err: error, sequenceNumber: seq(ledger, from), sent },
      'dead-letter send failed: records from this one on are reported failed',
    );
    fail(ledger, from, error);
  }
  ledger.metrics.deadLettered += sent;
  for (let k = 0; k < sent; k++) {
    const entry = entries[k]!;
    loggerOf(ledger).warn(
      {
        sequenceNumber: entry.sequenceNumber,
        reason: entry.reason,
        error: entry.error,
        sink: entry.sinkName,
      },
      'record dead-lettered',
    );
  }
}

/**
 * The batch index from which a failed send's records are not done: the first record the sink
 * names as not stored, or the first of the send when it names none it can be held to (any other
 * error, or a name that is not this batch's).
 */
function firstUnsent(ledger: Ledger, indices: readonly number[], error: unknown): number {
  const first = indices[0]!;
  // Read by name, as an InvalidImageError's issues are: the class is linked by the sinks that
  // throw it, not by every handler (and one thrown by another copy of tidewater still counts).
  if (!(error instanceof Error) || error.name !== 'DeadLetterSendError') return first;
  const { sequenceNumbers } = error as DeadLetterSendError;
  if (!Array.isArray(sequenceNumbers) || sequenceNumbers.length === 0) return first;
  let lowest = Number.POSITIVE_INFINITY;
  for (const label of sequenceNumbers) {
    const i = indexOf(ledger, label);
    if (i === undefined || !indices.includes(i)) return first;
    if (i < lowest) lowest = i;
  }
  return lowest;
}

/** What the dead-letter sink receives for record `index`, stamped when it is given up. */
export function deadLetterEntry(ledger: Ledger, given: GivenUp): DeadLetterEntry {
  const { index, reason, error, attempts, sinkName } = given;
  const raw = ledger.raws[index];
  const parsed = ledger.records[index];
  // An InvalidImageError's, read by name: only a handler with validated() schemas links the class.
  const issues =
    reason === 'invalid-image' ? (error as { issues?: readonly ImageIssue[] }).issues : undefined;
  const arn = parsed?.eventSourceARN ?? (raw as { eventSourceARN?: unknown } | null)?.eventSourceARN;
  return {
    reason,
    record: parsed?.raw ?? raw,
    eventID: parsed?.eventID ?? eventIdOf(raw),
    sequenceNumber: seq(ledger, index),
    eventSourceARN: typeof arn === 'string' ? arn : undefined,
    error: serializeError(error),
    attempts,
    ...(sinkName === undefined ? {} : { sinkName }),
    ...(issues === undefined ? {} : { issues }),
    at: new Date(given.at).toISOString(),
  };
}

function serializeError(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'NonError', message: String(error) };
}
