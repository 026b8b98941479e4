import type { DeadLetterEntry, DeadLetterReason } from '../sinks/types.js';
import { InvalidImageError } from './errors.js';
import { contextOf, dueDeadLetters, fail, type Ledger, loggerOf, seq } from './ledger.js';
import { eventIdOf } from './route.js';

/** The last stage: send the dead letters of records before the cut-off, in one call. */
export async function sendDeadLetters(ledger: Ledger): Promise<void> {
  const due = dueDeadLetters(ledger);
  if (due === undefined) return;
  try {
    await ledger.config.deadLetter!.send(due.entries, contextOf(ledger));
    ledger.metrics.deadLettered += due.entries.length;
    for (const entry of due.entries) {
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
  } catch (error) {
    loggerOf(ledger).error({ err: error }, 'dead-letter send failed: those records are reported failed');
    fail(ledger, due.lowest, error);
  }
}

/** What the dead-letter sink receives for record `index`, stamped when it is given up. */
export function deadLetterEntry(
  ledger: Ledger,
  index: number,
  reason: DeadLetterReason,
  error: unknown,
  attempts: number,
  sinkName: string | undefined,
): DeadLetterEntry {
  const raw = ledger.raws[index];
  const parsed = ledger.records[index];
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
    ...(error instanceof InvalidImageError ? { issues: error.issues } : {}),
    at: new Date(ledger.config.clock()).toISOString(),
  };
}

function serializeError(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'NonError', message: String(error) };
}
