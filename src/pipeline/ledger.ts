import { withFailureCause } from '../core/failure-cause.js';
import { MalformedRecordError } from '../records/errors.js';
import { sequenceNumberOf } from '../records/raw-identity.js';
import type { ClassifiedRecord } from '../records/types.js';
import type { DeadLetterReason } from '../sinks/types.js';
import type { HandlerContext, PipelineLogger } from './config.js';
import { DeadlineReachedError } from './errors.js';
import { type InvocationMetrics, newInvocationMetrics } from './invocation-metrics.js';
import type { CompiledConfig } from './plan.js';

/** The parts of a Lambda context the pipeline reads. A real `Context` fits. */
export interface InvocationContext {
  readonly awsRequestId?: string;
  getRemainingTimeInMillis?(): number;
}

/** One entry of a partial batch response: the sequence number Lambda retries from. */
export interface BatchItemFailure {
  itemIdentifier: string;
}

/** Lambda's partial batch response (ReportBatchItemFailures). */
export interface BatchResponse {
  batchItemFailures: BatchItemFailure[];
}

/**
 * A record given up on, as facts: the dead-letter stage makes its entry from them at the end, if
 * the record is still before the cut-off. `at` is when it was given up (the entry's time).
 */
export interface GivenUp {
  readonly index: number;
  readonly reason: DeadLetterReason;
  readonly error: unknown;
  readonly attempts: number;
  readonly sinkName: string | undefined;
  readonly at: number;
}

/**
 * A closure made by a function and returned, not written as `this.x = () => …`: V8 allocates a
 * function literal assigned to a property straight in the old generation (it expects a method).
 * Made per invocation and capturing the ledger, such a closure died in old space and, until the
 * next full collection, kept each batch (records, images) alive through every scavenge: about
 * 4× more promoted to the old generation, and more full collections.
 */
function timeLeftOf(ledger: Ledger): () => number {
  return () => timeLeft(ledger);
}

/**
 * What handlers and sinks receive as their context: the invocation's signal, logger and time left,
 * each made on first use. A class rather than an object literal with getters: V8 builds such a
 * literal on a slow path (dictionary properties). Its instances' hidden class is a transition
 * chain that dies with the last instance (see Ledger), so a pipeline keeps one instance alive:
 * contextShapeKeeper.
 */
class LedgerContext implements HandlerContext {
  readonly #ledger: Ledger;
  /** An own function, so it works taken off the context. */
  readonly remainingTimeMs: () => number;

  constructor(ledger: Ledger) {
    this.#ledger = ledger;
    this.remainingTimeMs = timeLeftOf(ledger);
  }

  get signal(): AbortSignal {
    return signalOf(this.#ledger);
  }

  get logger(): PipelineLogger {
    return loggerOf(this.#ledger);
  }
}

/**
 * A context on an empty ledger, for a pipeline to hold for as long as it lives: it keeps the
 * context's hidden class (and the ledger's) alive across full collections, so the per-invocation
 * contexts reuse it instead of building it again in the interpreter after each one.
 */
export function contextShapeKeeper(config: CompiledConfig): object {
  return new LedgerContext(openLedger(config, [], [], undefined, undefined));
}

/**
 * The state of one batch, and the only state the stages share; the functions below are its
 * operations. `cutoff` is the batch index of the first record that is not done; every failure
 * only ever lowers it, and no stage starts work at or beyond it, so the response (the sequence
 * number at `cutoff`) is always the lowest failed record. Records given up on are buffered here
 * as dead letters; the deadline is judged here.
 *
 * A plain object made by one object literal (openLedger), not a class instance: V8 keeps a
 * literal's hidden class alive in the literal's boilerplate, while a class instance's hidden
 * class is a transition from the constructor's that dies with the last instance. With a ledger
 * class, a full collection between invocations (Lambda's process runs them) killed it each time:
 * every property access in the stages missed its inline cache, which reset V8's optimization
 * counters, so the stages never left the interpreter (−30% of the batch's rate, `--log-ic`:
 * every ledger access re-learned once per invocation).
 *
 * Fields written after opening are the ledger functions' own; stages read, and change only
 * `masks` and `firstWritten` directly.
 */
export interface Ledger {
  readonly config: CompiledConfig;
  readonly n: number;
  readonly raws: readonly unknown[];
  /** Parsed records; undefined where parsing failed (`parseErrors` says why). */
  readonly records: readonly (ClassifiedRecord | undefined)[];
  readonly parseErrors: readonly unknown[] | undefined;
  /**
   * Per record, the work still owed to it: a bit per sink it is routed to, and HANDLER_BIT while
   * its kind handler has to run. Zero for records that need nothing (unrouted, failed, malformed).
   */
  readonly masks: number[];
  /**
   * Per item schema (CompiledConfig.schemas), per record, the record as the sinks and handler
   * behind that schema receive it: its images replaced by the schema's output. Set by the
   * validation stage; undefined when the pipeline has no schema.
   */
  views: (ClassifiedRecord | undefined)[][] | undefined;
  readonly metrics: InvocationMetrics;
  /** Per sink, the lowest index handed to it: a failed flush fails from there. */
  readonly firstWritten: number[];
  cutoff: number;
  cutoffError: unknown;
  readonly lambda: InvocationContext | undefined;
  /**
   * performance.now() at which the deadline margin is reached, read once from the Lambda context
   * at the start; undefined without one. The abort timer is armed from it only when someone takes
   * the signal: a timer armed on every invocation made V8 promote several times more of each
   * batch's objects to the old generation. Opened as undefined and set after: a field the literal
   * gives a fractional number would have its hidden class rebuilt each invocation (see above).
   */
  deadlineAt: number | undefined;
  // Made on first use: a batch that goes well never needs them.
  givenUp: GivenUp[] | undefined;
  controller: AbortController | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
  logger: PipelineLogger | undefined;
  context: LedgerContext | undefined;
  seqIndex: Map<string, number> | undefined;
  deadlineLogged: boolean;
  /**
   * Per position, the sequence number the partial batch response names when that position is the
   * cut-off; undefined when it is the record's own (always, but for a reordered Kinesis batch).
   */
  reportAt: readonly string[] | undefined;
}

export function openLedger(
  config: CompiledConfig,
  raws: readonly unknown[],
  records: readonly (ClassifiedRecord | undefined)[],
  parseErrors: readonly unknown[] | undefined,
  lambda: InvocationContext | undefined,
): Ledger {
  const n = raws.length;
  const metrics = newInvocationMetrics(config.sinks.length);
  metrics.records = n;
  const ledger: Ledger = {
    config,
    n,
    raws,
    records,
    parseErrors,
    masks: new Array<number>(n).fill(0),
    views: undefined,
    metrics,
    firstWritten: new Array<number>(config.sinks.length).fill(Number.POSITIVE_INFINITY),
    cutoff: n,
    cutoffError: undefined,
    lambda,
    deadlineAt: undefined,
    givenUp: undefined,
    controller: undefined,
    timer: undefined,
    logger: undefined,
    context: undefined,
    seqIndex: undefined,
    deadlineLogged: false,
    reportAt: undefined,
  };
  const left = remainingBeforeMargin(lambda, config.deadlineMarginMs);
  if (Number.isFinite(left)) ledger.deadlineAt = performance.now() + Math.max(0, left);
  return ledger;
}

/** Stops the abort timer, if one was armed. */
export function closeLedger(ledger: Ledger): void {
  if (ledger.timer !== undefined) clearTimeout(ledger.timer);
}

/** The sequence number of record `index` (< n; read and checked when the batch was parsed). */
export function seq(ledger: Ledger, index: number): string {
  const record = ledger.records[index];
  return record === undefined ? sequenceNumberOf(ledger.raws[index])! : record.sequenceNumber;
}

/** The context handed to handlers and sinks. */
export function contextOf(ledger: Ledger): HandlerContext {
  if (ledger.context === undefined) ledger.context = new LedgerContext(ledger);
  return ledger.context;
}

/** The invocation's child logger: requestId, stream and sequence range on every line. */
export function loggerOf(ledger: Ledger): PipelineLogger {
  if (ledger.logger === undefined) {
    const first = ledger.raws[0] as { eventSourceARN?: unknown } | undefined;
    ledger.logger = ledger.config.logger.child({
      requestId: ledger.lambda?.awsRequestId,
      eventSourceARN: typeof first?.eventSourceARN === 'string' ? first.eventSourceARN : undefined,
      firstSequenceNumber: seq(ledger, 0),
      lastSequenceNumber: seq(ledger, ledger.n - 1),
      records: ledger.n,
    });
  }
  return ledger.logger;
}

/** Aborted at the deadline margin; made, and its timer armed, on first use. */
export function signalOf(ledger: Ledger): AbortSignal {
  if (ledger.controller === undefined) {
    ledger.controller = new AbortController();
    if (ledger.deadlineAt !== undefined) {
      const delay = ledger.deadlineAt - performance.now();
      if (delay <= 0) abort(ledger);
      else {
        ledger.timer = setTimeout(abort, delay, ledger);
        ledger.timer.unref?.();
      }
    }
  }
  return ledger.controller.signal;
}

function remainingBeforeMargin(lambda: InvocationContext | undefined, marginMs: number): number {
  const remaining = lambda?.getRemainingTimeInMillis?.();
  return typeof remaining === 'number' ? remaining - marginMs : Number.POSITIVE_INFINITY;
}

/** Milliseconds before the deadline margin; Infinity without a Lambda context. */
export function timeLeft(ledger: Ledger): number {
  return remainingBeforeMargin(ledger.lambda, ledger.config.deadlineMarginMs);
}

export function outOfTime(ledger: Ledger): boolean {
  if (ledger.controller?.signal.aborted) return true;
  if (timeLeft(ledger) > 0) return false;
  abort(ledger);
  return true;
}

function abort(ledger: Ledger): void {
  // Not through signalOf: aborting needs no timer.
  if (ledger.controller === undefined) ledger.controller = new AbortController();
  if (!ledger.controller.signal.aborted) {
    const next = ledger.cutoff < ledger.n ? seq(ledger, ledger.cutoff) : undefined;
    ledger.controller.abort(new DeadlineReachedError(next, ledger.config.deadlineMarginMs));
  }
}

export function fail(ledger: Ledger, index: number, error: unknown): void {
  if (index < ledger.cutoff) {
    ledger.cutoff = index;
    ledger.cutoffError = error;
  }
}

/** Stops for the deadline: everything from `index` on is reported, so the next batch resumes there. */
export function deadline(ledger: Ledger, index: number): void {
  const error = new DeadlineReachedError(seq(ledger, index), ledger.config.deadlineMarginMs);
  if (!ledger.deadlineLogged) {
    ledger.deadlineLogged = true;
    loggerOf(ledger).warn(
      { sequenceNumber: seq(ledger, index), timeLeftMs: timeLeft(ledger) },
      error.message,
    );
  }
  fail(ledger, index, error);
}

/** The batch index of a sequence number of this batch, or undefined. */
export function indexOf(ledger: Ledger, sequenceNumber: unknown): number | undefined {
  if (typeof sequenceNumber !== 'string') return undefined;
  if (ledger.seqIndex === undefined) {
    ledger.seqIndex = new Map();
    for (let i = 0; i < ledger.n; i++) ledger.seqIndex.set(seq(ledger, i), i);
  }
  return ledger.seqIndex.get(sequenceNumber);
}

/** Whether `error` says record `index` itself is malformed (thrown by its getters on first read). */
export function isPoison(ledger: Ledger, error: unknown, index: number): error is MalformedRecordError {
  return error instanceof MalformedRecordError && error.sequenceNumber === seq(ledger, index);
}

/**
 * A malformed record: counted, logged and given up at once (retrying cannot fix it), and routed
 * nowhere else, so no later sink trips over it again.
 */
export function malformed(
  ledger: Ledger,
  index: number,
  error: MalformedRecordError,
  where: string | undefined,
  attempts = 1,
): void {
  ledger.metrics.malformed++;
  ledger.masks[index] = 0;
  loggerOf(ledger).warn(
    { err: error, sequenceNumber: seq(ledger, index), ...(where === undefined ? {} : { sink: where }) },
    'malformed stream record',
  );
  giveUp(ledger, index, 'malformed', error, where === undefined ? 0 : attempts, where);
}

/** Buffers a record's dead letter, or fails it when there is nowhere to send it. */
export function giveUp(
  ledger: Ledger,
  index: number,
  reason: DeadLetterReason,
  error: unknown,
  attempts: number,
  sinkName: string | undefined,
): void {
  if (ledger.config.deadLetter === undefined) {
    loggerOf(ledger).error(
      { err: error, sequenceNumber: seq(ledger, index), reason },
      'giving up on a record but no dead-letter sink is configured: reporting it failed',
    );
    fail(ledger, index, error);
    return;
  }
  const given: GivenUp = { index, reason, error, attempts, sinkName, at: ledger.config.clock() };
  if (ledger.givenUp === undefined) ledger.givenUp = [given];
  else ledger.givenUp.push(given);
}

/**
 * The records given up on that Lambda will not deliver again, in stream order (a record's in the
 * order it was given up); undefined when there are none. Decided here, once every lane is done,
 * because Lambda redelivers every record at or after the sequence number the response names: a
 * record given up at or past it comes again, so its dead letter would stand beside whatever the
 * redelivery writes. Before the cut-off is past it but for a reordered Kinesis batch, where a
 * record before the cut-off may hold a higher sequence number than the one reported.
 */
export function dueDeadLetters(ledger: Ledger): GivenUp[] | undefined {
  if (ledger.givenUp === undefined) return undefined;
  const { cutoff } = ledger;
  const reported = cutoff < ledger.n ? ledger.reportAt?.[cutoff] : undefined;
  const due = ledger.givenUp.filter(
    (d) => d.index < cutoff && (reported === undefined || sequenceBelow(seq(ledger, d.index), reported)),
  );
  // Per-key lanes give records up out of stream order; the sort is stable.
  due.sort((a, b) => a.index - b.index);
  return due.length === 0 ? undefined : due;
}

/**
 * Whether sequence number `a` is below `b`, as decimal numbers (leading zeros ignored). A text that
 * is not digits (a malformed record's) has no place in Lambda's order: it counts as below, so its
 * record is dead-lettered as it would be in a batch never reordered.
 */
function sequenceBelow(a: string, b: string): boolean {
  const x = a.replace(/^0+(?=\d)/, '');
  const y = b.replace(/^0+(?=\d)/, '');
  if (!/^\d+$/.test(x) || !/^\d+$/.test(y)) return true;
  return x.length !== y.length ? x.length < y.length : x < y;
}

/** Lambda's partial batch response: nothing, or the first record not done. */
export function response(ledger: Ledger): BatchResponse {
  if (ledger.cutoff === ledger.n) return { batchItemFailures: [] };
  const itemIdentifier = ledger.reportAt?.[ledger.cutoff] ?? seq(ledger, ledger.cutoff);
  loggerOf(ledger).warn(
    { err: ledger.cutoffError, itemIdentifier, notDone: ledger.n - ledger.cutoff },
    'batch partially failed: Lambda retries from the reported record',
  );
  return withFailureCause({ batchItemFailures: [{ itemIdentifier }] }, ledger.cutoffError);
}
