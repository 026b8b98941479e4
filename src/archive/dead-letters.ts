import type pLimit from 'p-limit';
import { parseStreamRecord } from '../records/index.js';
import type { ClassifiedRecord } from '../records/types.js';
import { getText, listKeys, type Store } from './store.js';

/** Dead-letter objects (S3DeadLetterSink) of one tenant in a time range, found by reading each. */
export interface DeadLetterScan {
  /** Entries whose record is the tenant's and in range. */
  matches: string[];
  /** Entries whose record could not be placed (malformed, no time, the partitioner threw): kept. */
  unattributed: string[];
  examined: number;
}

/**
 * Reads every entry under `prefix` (one small JSON object each, `<prefix>/reason=…/….json`): an
 * entry holds the record as it arrived, and the store is keyed by reason and sequence number, so
 * neither the tenant nor the time is in the key. A record is placed by its
 * ApproximateCreationDateTime, or the entry's `at` when it has none.
 */
export async function scanDeadLetters(
  store: Store,
  prefix: string,
  isTenant: (record: ClassifiedRecord) => boolean,
  range: { fromMs: number; toMs: number },
  limit: ReturnType<typeof pLimit>,
): Promise<DeadLetterScan> {
  const keys = (await listKeys(store, prefix === '' ? '' : `${prefix}/`)).filter((x) =>
    x.key.endsWith('.json'),
  );
  const scan: DeadLetterScan = { matches: [], unattributed: [], examined: keys.length };
  await Promise.all(
    keys.map(({ key }) =>
      limit(async () => {
        const place = placeEntry(await getText(store, key), isTenant, range);
        if (place === 'match') scan.matches.push(key);
        else if (place === 'unknown') scan.unattributed.push(key);
      }),
    ),
  );
  scan.matches.sort();
  scan.unattributed.sort();
  return scan;
}

function placeEntry(
  text: string,
  isTenant: (record: ClassifiedRecord) => boolean,
  range: { fromMs: number; toMs: number },
): 'match' | 'other' | 'unknown' {
  try {
    const entry = JSON.parse(text) as { record?: unknown; at?: unknown };
    const record = parseStreamRecord(entry.record);
    const created = record.approximateCreationTime;
    const ms = created === undefined ? Date.parse(String(entry.at)) : created * 1000;
    if (!Number.isFinite(ms)) return 'unknown';
    if (ms < range.fromMs || ms >= range.toMs) return 'other';
    return isTenant(record) ? 'match' : 'other';
  } catch {
    return 'unknown';
  }
}
