import { MalformedRecordError } from '../records/errors.js';
import type { RecordParser } from '../records/parse.js';
import { eventIdOf, sequenceNumberOf } from '../records/raw-identity.js';
import type { ClassifiedRecord } from '../records/types.js';
import { recordImageError } from '../records/validate.js';
import { UnreadableSequenceNumberError, UnroutedRecordError } from './errors.js';
import { fail, giveUp, isPoison, type Ledger, loggerOf, malformed } from './ledger.js';
import type { CompiledConfig } from './plan.js';
import type { ReadBatch } from './read-batch.js';

/**
 * The first stage, before anything observable happens: parses every record and checks that each
 * has a sequence number. Parsing is pure, so doing it all up front changes nothing a predicate,
 * log or sink could see, and it is the only pass over the raw records: their sequence numbers are
 * read from the parsed records. A parse error is kept for routeRecords, which handles it in
 * stream order.
 *
 * Throws UnreadableSequenceNumberError (the whole batch fails) for the first record without a
 * readable sequence number: no partial response could name it.
 */
export function readRecords(raws: readonly unknown[], parse: RecordParser): ReadBatch {
  const n = raws.length;
  const records = new Array<ClassifiedRecord | undefined>(n);
  let errors: unknown[] | undefined;
  for (let i = 0; i < n; i++) {
    try {
      // The parser rejects an empty or missing sequence number (missing-sequence-number), so
      // every record it returns has one; only a failed parse needs the raw record looked at.
      records[i] = parse(raws[i]);
    } catch (error) {
      if (sequenceNumberOf(raws[i]) === undefined)
        throw new UnreadableSequenceNumberError(i, eventIdOf(raws[i]));
      errors ??= new Array<unknown>(n);
      errors[i] = error;
    }
  }
  return { records, errors };
}

/**
 * Health-checks and routes every record, in stream order: its routing mask (sinks and kind
 * handler) goes into the ledger. A malformed record is given up on, a throwing predicate fails its
 * record, an unrouted one is counted, dead-lettered or failed as configured. Returns the clock
 * reading the batch was judged at (TTL health, record age).
 */
export function routeRecords(ledger: Ledger, config: CompiledConfig): number {
  const { metrics, records, masks, n } = ledger;
  const { kindMasks, predicateRoutes, ttlHealth } = config;
  const errors = ledger.parseErrors;
  const now = config.clock();
  const nowSeconds = now / 1000;
  for (let i = 0; i < n; i++) {
    const record = records[i];
    if (record === undefined) {
      const error = errors![i];
      if (!(error instanceof MalformedRecordError)) throw error;
      malformed(ledger, i, error, undefined);
      continue;
    }
    const kind = record.kind;
    if (ttlHealth !== undefined && (kind === 'insert' || kind === 'modify'))
      ttlHealth(ledger as never, record, nowSeconds);
    let mask = kindMasks[kind];
    if (predicateRoutes.length !== 0) {
      const routed = routeByPredicates(ledger, i, record, predicateRoutes);
      if (routed === undefined) continue;
      mask |= routed;
    }
    if (mask === 0) {
      metrics.unrouted++;
      if (config.onUnrouted === 'dead-letter')
        giveUp(ledger, i, 'unrouted', new UnroutedRecordError(record), 0, undefined);
      else if (config.onUnrouted === 'fail') fail(ledger, i, new UnroutedRecordError(record));
      continue;
    }
    if ((mask & config.checkedSinks) !== 0) {
      // A sink that stores images as they arrived must never hold one that cannot be read back.
      const problem = recordImageError(record);
      if (problem !== undefined) {
        malformed(ledger, i, problem, undefined);
        continue;
      }
    }
    masks[i] = mask;
  }
  return now;
}

/** The sink bits of the predicate routes that take the record; undefined when one threw (handled here). */
function routeByPredicates(
  ledger: Ledger,
  i: number,
  record: ClassifiedRecord,
  routes: CompiledConfig['predicateRoutes'],
): number | undefined {
  let mask = 0;
  let r = 0;
  try {
    for (; r < routes.length; r++) {
      const route = routes[r]!;
      if (route.test!(record)) mask |= route.sinkMask;
    }
    return mask;
  } catch (error) {
    const name = routes[r]!.name;
    if (isPoison(ledger, error, i)) malformed(ledger, i, error, `route:${name}`);
    else {
      // A throwing predicate is a bug in the config: retrying may help (a fixed deploy), dropping would lose data.
      loggerOf(ledger).error(
        { err: error, sequenceNumber: record.sequenceNumber, route: name },
        'route predicate threw',
      );
      fail(ledger, i, error);
    }
    return undefined;
  }
}
