import { HOUR_MS } from './store.js';

/**
 * When an hour counts as closed, by default: the hour's end plus 25 hours. A record is archived
 * into the hour of its ApproximateCreationDateTime, and Lambda stops redelivering a record once it
 * is older than the mapping's maximumRecordAgeInSeconds (at most 24 hours on DynamoDB streams,
 * whose records live 24 hours): after that, only a delivery already in flight can still write
 * into the hour — the extra hour covers it.
 */
export const DEFAULT_CLOSED_AFTER_SECONDS = 25 * 3600;

/** Epoch milliseconds at which the hour starting at `hourStartMs` is closed. */
export function closesAt(hourStartMs: number, closedAfterSeconds: number): number {
  return hourStartMs + HOUR_MS + closedAfterSeconds * 1000;
}

/** The start of the hour holding `ms` (UTC). */
export function floorHour(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

/**
 * The whole hours overlapping [fromMs, toMs), as [first hour's start, last hour's end): what a
 * range operation covers, since the archive's unit is the hour.
 */
export function wholeHours(fromMs: number, toMs: number): { fromMs: number; toMs: number } {
  return { fromMs: floorHour(fromMs), toMs: floorHour(toMs - 1) + HOUR_MS };
}

/**
 * The hours a scheduled compaction run covers at `nowMs`: the `lookbackHours` most recent closed
 * hours. Each run repeats the ones already done at the cost of a listing, so an hour a failed run
 * left behind is picked up by the next runs, for `lookbackHours` hours.
 */
export function scheduledWindow(
  nowMs: number,
  closedAfterSeconds: number,
  lookbackHours: number,
): { fromMs: number; toMs: number } {
  // The last closed hour ends at or before now - closedAfter.
  const toMs = floorHour(nowMs - closedAfterSeconds * 1000);
  return { fromMs: toMs - lookbackHours * HOUR_MS, toMs };
}

/**
 * `YYYY-MM-DDTHH` (or any ISO-8601 time inside the hour) → that hour's [start, end). Undefined
 * for text that is no time.
 */
export function parseHour(text: string): { fromMs: number; toMs: number } | undefined {
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}T\d{2}$/.test(text) ? `${text}:00:00Z` : text);
  if (!Number.isFinite(ms)) return undefined;
  const fromMs = floorHour(ms);
  return { fromMs, toMs: fromMs + HOUR_MS };
}
