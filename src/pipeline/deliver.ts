import pLimit from 'p-limit';
import { MalformedRecordError } from '../records/errors.js';
import { type KeyIdentity, recordKeyIdentity } from '../records/key-identity.js';
import type { ClassifiedRecord } from '../records/types.js';
import type { Sink } from '../sinks/types.js';
import { SinkContractError } from './errors.js';
import {
  contextOf,
  deadline,
  fail,
  indexOf,
  isPoison,
  type Ledger,
  loggerOf,
  malformed,
  outOfTime,
} from './ledger.js';
import { type CompiledConfig, HANDLER_BIT, KINDS, SINK_BITS } from './plan.js';
import { type Failures, retryFailures } from './retry.js';
import { isThenable } from './thenable.js';

/** Handlers by kind, where KINDS lists them: record.kind → index into CompiledConfig.handlers. */
const KIND_INDEX = Object.fromEntries(KINDS.map((kind, i) => [kind, i])) as Record<string, number>;

/** Delivers the whole batch in stream order (ordered mode): one lane, every record in it. */
export function deliverOrdered(ledger: Ledger, config: CompiledConfig): Promise<void> {
  return runLane(ledger, config, undefined);
}

/**
 * Per-key mode: one lane per item, each in stream order, `concurrency` lanes at a time. The item
 * is its keys' identity by value (records/key-identity), not their text: DynamoDB Local's MODIFY
 * carries a number key as the request spelt it (`1.50`), so by text one item's records ran in two
 * lanes at once and could reach a sink out of order.
 */
export async function deliverPerKey(ledger: Ledger, config: CompiledConfig): Promise<void> {
  const lanes = new Map<string, number[]>();
  const { masks } = ledger;
  for (let i = 0; i < ledger.n; i++) {
    if (masks[i] === 0) continue;
    const key = laneKey(ledger, i);
    if (key === undefined) continue;
    const lane = lanes.get(key);
    if (lane === undefined) lanes.set(key, [i]);
    else lane.push(i);
  }
  const limit = pLimit(config.concurrency);
  // Every lane settles before the batch does: with Promise.all a lane that threw settled it while
  // sibling lanes' requests were still in flight, to fail or succeed after the invocation ended.
  const settled = await Promise.allSettled(
    [...lanes.values()].map((lane) => limit(() => runLane(ledger, config, lane))),
  );
  for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason;
}

/**
 * A record's lane: its item's key identity. Keys DynamoDB could not hold (a key attribute that is
 * not one S, N or B) are a malformed record, dead-lettered rather than failing the batch.
 */
function laneKey(ledger: Ledger, i: number): KeyIdentity | undefined {
  try {
    return recordKeyIdentity(ledger.records[i]!);
  } catch (error) {
    if (!(error instanceof MalformedRecordError)) throw error;
    malformed(ledger, i, error, undefined);
    return undefined;
  }
}

/**
 * Runs one lane: kind handlers record by record, then each sink once with the lane's records
 * routed to it. `lane` lists batch indices in stream order; undefined is every record (ordered
 * mode, where a list would only repeat 0..n-1). Records with no work left (mask 0) are skipped;
 * nothing at or past the cut-off starts.
 */
async function runLane(
  ledger: Ledger,
  config: CompiledConfig,
  lane: readonly number[] | undefined,
): Promise<void> {
  const { masks } = ledger;
  const end = lane === undefined ? ledger.n : lane.length;
  if (config.handledKinds !== 0) {
    const records = recordsFor(ledger, config.handlerSchema);
    for (let k = 0; k < end; k++) {
      const i = lane === undefined ? k : lane[k]!;
      if (i >= ledger.cutoff) break;
      if ((masks[i]! & HANDLER_BIT) === 0) continue;
      const record = records[i]!;
      if (outOfTime(ledger)) return deadline(ledger, firstUndone(ledger, lane, i, 0));
      const handler = config.handlers[KIND_INDEX[record.kind]!]!;
      try {
        // Awaited only when it returns a promise: a synchronous handler costs no microtask per record.
        const result = handler(record, contextOf(ledger));
        if (isThenable(result)) await result;
      } catch (error) {
        if (isPoison(ledger, error, i)) {
          malformed(ledger, i, error, `handler:${record.kind}`);
          continue;
        }
        await retryFailures(ledger, config, `handler:${record.kind}`, new Map([[i, error]]), async () => {
          try {
            await handler(record, contextOf(ledger));
            return undefined;
          } catch (again) {
            return new Map([[i, again]]);
          }
        });
      }
    }
  }
  const sinks = config.sinks;
  for (let s = 0; s < sinks.length; s++) {
    const bit = 1 << s;
    // Counted first, then filled: arrays grown by push were reallocated and copied several
    // times per sink and batch, garbage that made the scavenges of a big batch more frequent.
    let count = 0;
    for (let k = 0; k < end; k++) {
      const i = lane === undefined ? k : lane[k]!;
      if (i >= ledger.cutoff) break;
      if ((masks[i]! & bit) !== 0) count++;
    }
    if (count === 0) continue;
    const records = recordsFor(ledger, config.sinkSchemas[s]!);
    const indices = new Array<number>(count);
    const batch = new Array<ClassifiedRecord>(count);
    for (let k = 0, j = 0; j < count; k++) {
      const i = lane === undefined ? k : lane[k]!;
      if ((masks[i]! & bit) === 0) continue;
      indices[j] = i;
      batch[j++] = records[i]!;
    }
    if (outOfTime(ledger)) return deadline(ledger, firstUndone(ledger, lane, Number.POSITIVE_INFINITY, s));
    await deliverToSink(ledger, config, s, indices, batch);
  }
}

/**
 * The records as the sinks or handler behind schema `j` receive them: the validation stage's views
 * (images replaced by the schema's output), or the stream records themselves when `j` is -1.
 */
function recordsFor(ledger: Ledger, j: number): readonly (ClassifiedRecord | undefined)[] {
  return j < 0 ? ledger.records : ledger.views![j]!;
}

/** The first record of the lane with work left: a handler not yet run (from `handlerFrom`) or a sink from `sinkFrom` on. */
function firstUndone(
  ledger: Ledger,
  lane: readonly number[] | undefined,
  handlerFrom: number,
  sinkFrom: number,
): number {
  const pending = SINK_BITS & ~((1 << sinkFrom) - 1);
  const end = lane === undefined ? ledger.n : lane.length;
  for (let k = 0; k < end; k++) {
    const i = lane === undefined ? k : lane[k]!;
    if (i >= ledger.cutoff) break;
    const mask = ledger.masks[i]!;
    if ((mask & pending) !== 0) return i;
    if (i >= handlerFrom && (mask & HANDLER_BIT) !== 0) return i;
  }
  return ledger.cutoff;
}

async function deliverToSink(
  ledger: Ledger,
  config: CompiledConfig,
  s: number,
  indices: number[],
  batch: ClassifiedRecord[],
): Promise<void> {
  const sink = config.sinks[s]!;
  ledger.metrics.routed[s]! += indices.length;
  if (indices[0]! < ledger.firstWritten[s]!) ledger.firstWritten[s] = indices[0]!;
  const failures = await write(ledger, sink, indices, batch);
  if (failures === undefined) return;
  const records = recordsFor(ledger, config.sinkSchemas[s]!);
  await retryFailures(ledger, config, sink.name, failures, (pending) =>
    write(
      ledger,
      sink,
      pending,
      pending.map((i) => records[i]!),
    ),
  );
}

/** One sink call. A throw fails every record given; reported failures are mapped back to batch indices. */
async function write(
  ledger: Ledger,
  sink: Sink,
  indices: readonly number[],
  batch: readonly ClassifiedRecord[],
): Promise<Failures | undefined> {
  let failed: readonly { sequenceNumber: string; error: unknown }[] | undefined;
  for (;;) {
    try {
      // Awaited only when it returns a promise, as handlers are: a synchronous sink costs no microtask.
      const result = sink.write(batch, contextOf(ledger));
      failed = (isThenable(result) ? await result : result)?.failed;
      break;
    } catch (error) {
      // Images are checked when first read: a sink that hits a malformed one throws for that
      // record alone. It is poison, not a sink outage: dead-letter it and give the sink the
      // rest again at once (sinks are idempotent), without spending a retry attempt on them.
      const at = poisonAt(ledger, error, indices);
      if (at < 0) return new Map(indices.map((i) => [i, error]));
      malformed(ledger, indices[at]!, error as MalformedRecordError, sink.name);
      // Without a dead-letter sink the record was failed instead, lowering the cutoff: nothing
      // at or after it may start. And each rerun is a new sink call, so it minds the deadline.
      const keptIndices: number[] = [];
      const keptBatch: ClassifiedRecord[] = [];
      for (let k = 0; k < indices.length; k++) {
        if (k === at || indices[k]! >= ledger.cutoff) continue;
        keptIndices.push(indices[k]!);
        keptBatch.push(batch[k]!);
      }
      indices = keptIndices;
      batch = keptBatch;
      if (indices.length === 0) return undefined;
      if (outOfTime(ledger)) {
        deadline(ledger, indices[0]!);
        return undefined;
      }
    }
  }
  if (failed === undefined || failed.length === 0) return undefined;
  const given = new Set(indices);
  const out: Failures = new Map();
  for (const failure of failed) {
    const i = indexOf(ledger, failure?.sequenceNumber);
    if (i === undefined || !given.has(i)) {
      const error = new SinkContractError(sink.name, failure?.sequenceNumber);
      loggerOf(ledger).error({ err: error }, error.message);
      return new Map(indices.map((j) => [j, error]));
    }
    out.set(i, failure.error);
  }
  return out;
}

/** The position in `indices` of the record a MalformedRecordError names, or -1. */
function poisonAt(ledger: Ledger, error: unknown, indices: readonly number[]): number {
  if (!(error instanceof MalformedRecordError)) return -1;
  for (let k = 0; k < indices.length; k++) if (isPoison(ledger, error, indices[k]!)) return k;
  return -1;
}

/**
 * Flushes buffering sinks that were written to; a failed flush fails from the sink's first record.
 * Undefined when no sink has anything to flush.
 */
export function flushSinks(ledger: Ledger, config: CompiledConfig): Promise<void> | undefined {
  for (let s = 0; s < config.sinks.length; s++) {
    if (flushDue(ledger, config, s)) return flushFrom(ledger, config, s);
  }
  return undefined;
}

function flushDue(ledger: Ledger, config: CompiledConfig, s: number): boolean {
  return config.sinks[s]!.flush !== undefined && ledger.firstWritten[s]! !== Number.POSITIVE_INFINITY;
}

async function flushFrom(ledger: Ledger, config: CompiledConfig, from: number): Promise<void> {
  for (let s = from; s < config.sinks.length; s++) {
    if (!flushDue(ledger, config, s)) continue;
    const sink = config.sinks[s]!;
    try {
      await sink.flush!(contextOf(ledger));
    } catch (error) {
      loggerOf(ledger).error(
        { err: error, sink: sink.name },
        'sink flush failed: its records are reported failed',
      );
      fail(ledger, ledger.firstWritten[s]!, error);
    }
  }
}
