import { MalformedRecordError } from '../records/errors.js';
import type { ClassifiedRecord } from '../records/types.js';
import type { DeadLetterEntry, DeadLetterReason } from '../sinks/types.js';
import type { CompiledConfig, HandlerContext, PipelineLogger } from './config.js';
import { deadLetterEntry } from './dead-letter.js';
import { DeadlineReachedError } from './errors.js';
import { InvocationMetrics } from './metrics.js';
import { sequenceNumberOf } from './route.js';

/** The parts of a Lambda context the pipeline reads. A real `Context` fits. */
export interface InvocationContext {
  readonly awsRequestId?: string;
  getRemainingTimeInMillis?(): number;
}

export interface BatchItemFailure {
  itemIdentifier: string;
}

/** Lambda's partial batch response (ReportBatchItemFailures). */
export interface BatchResponse {
  batchItemFailures: BatchItemFailure[];
}

/** A record given up on: its dead-letter entry, sent at the end if the record is still before the cut-off. */
interface GivenUp {
  readonly index: number;
  readonly entry: DeadLetterEntry;
}

/**
 * A closure made by a function and returned, not written as `this.x = () => …`: V8 allocates a
 * function literal assigned to a property straight in the old generation (it expects a method).
 * Made per invocation and capturing the ledger, such a closure died in old space and, until the
 * next full collection, kept each batch (records, images) alive through every scavenge: about
 * 4× more promoted to the old generation, and more full collections.
 */
function timeLeftOf(ledger: Ledger): () => number {
  return () => ledger.timeLeft();
}

/**
 * What handlers and sinks receive as their context: the invocation's signal, logger and time left,
 * each made on first use. A class rather than an object literal with getters: V8 builds such a
 * literal on a slow path that allocates in the old generation, and one per invocation was enough
 * to make full collections several times more frequent.
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
    return this.#ledger.signal;
  }

  get logger(): PipelineLogger {
    return this.#ledger.logger;
  }
}

/**
 * The state of one batch, and the only state the stages share. `cutoff` is the batch index of the
 * first record that is not done; every failure only ever lowers it, and no stage starts work at or
 * beyond it, so the response (the sequence number at `cutoff`) is always the lowest failed record.
 * Records given up on are buffered here as dead letters; the deadline is judged here.
 *
 * Everything a batch that goes well never needs (logger child, abort controller and its timer,
 * sequence-number index, dead-letter buffer) is made on first use.
 */
export class Ledger {
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
  readonly metrics: InvocationMetrics;
  /** Per sink, the lowest index handed to it: a failed flush fails from there. */
  readonly firstWritten: number[];
  cutoff: number;
  cutoffError: unknown;
  readonly #lambda: InvocationContext | undefined;
  /**
   * performance.now() at which the deadline margin is reached, read once from the Lambda context
   * at the start (Infinity without one). The abort timer is armed from it only when someone takes
   * the signal: a timer armed on every invocation, even a no-op one, made V8 promote several times
   * more of each batch's objects to the old generation (tidewater's throughput −30% at batch 100).
   */
  readonly #deadlineAt: number;
  #givenUp: GivenUp[] | undefined;
  #controller: AbortController | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #logger: PipelineLogger | undefined;
  #context: LedgerContext | undefined;
  #seqIndex: Map<string, number> | undefined;
  #deadlineLogged = false;

  constructor(
    config: CompiledConfig,
    raws: readonly unknown[],
    records: readonly (ClassifiedRecord | undefined)[],
    parseErrors: readonly unknown[] | undefined,
    lambda: InvocationContext | undefined,
  ) {
    const n = raws.length;
    this.config = config;
    this.n = n;
    this.raws = raws;
    this.records = records;
    this.parseErrors = parseErrors;
    this.masks = new Array<number>(n).fill(0);
    this.metrics = new InvocationMetrics(config.sinks.length);
    this.metrics.records = n;
    this.firstWritten = new Array<number>(config.sinks.length).fill(Number.POSITIVE_INFINITY);
    this.cutoff = n;
    this.#lambda = lambda;
    const left = this.timeLeft();
    this.#deadlineAt = Number.isFinite(left) ? performance.now() + Math.max(0, left) : left;
  }

  /** The sequence number of record `index` (< n; read and checked when the batch was parsed). */
  seq(index: number): string {
    const record = this.records[index];
    return record === undefined ? sequenceNumberOf(this.raws[index])! : record.sequenceNumber;
  }

  /** The context handed to handlers and sinks. */
  get context(): HandlerContext {
    if (this.#context === undefined) this.#context = new LedgerContext(this);
    return this.#context;
  }

  /** The invocation's child logger: requestId, stream and sequence range on every line. */
  get logger(): PipelineLogger {
    if (this.#logger === undefined) {
      const first = this.raws[0] as { eventSourceARN?: unknown } | undefined;
      this.#logger = this.config.logger.child({
        requestId: this.#lambda?.awsRequestId,
        eventSourceARN: typeof first?.eventSourceARN === 'string' ? first.eventSourceARN : undefined,
        firstSequenceNumber: this.seq(0),
        lastSequenceNumber: this.seq(this.n - 1),
        records: this.n,
      });
    }
    return this.#logger;
  }

  /** Aborted at the deadline margin; made, and its timer armed, on first use. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (Number.isFinite(this.#deadlineAt)) {
        const delay = this.#deadlineAt - performance.now();
        if (delay <= 0) this.#abort();
        else {
          this.#timer = setTimeout(() => this.#abort(), delay);
          this.#timer.unref?.();
        }
      }
    }
    return this.#controller.signal;
  }

  /** Milliseconds before the deadline margin; Infinity without a Lambda context. */
  timeLeft(): number {
    const remaining = this.#lambda?.getRemainingTimeInMillis?.();
    return typeof remaining === 'number'
      ? remaining - this.config.deadlineMarginMs
      : Number.POSITIVE_INFINITY;
  }

  outOfTime(): boolean {
    if (this.#controller?.signal.aborted) return true;
    if (this.timeLeft() > 0) return false;
    this.#abort();
    return true;
  }

  #abort(): void {
    // Not through `signal`: aborting needs no timer.
    this.#controller ??= new AbortController();
    if (!this.#controller.signal.aborted) {
      const next = this.cutoff < this.n ? this.seq(this.cutoff) : undefined;
      this.#controller.abort(new DeadlineReachedError(next, this.config.deadlineMarginMs));
    }
  }

  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  fail(index: number, error: unknown): void {
    if (index < this.cutoff) {
      this.cutoff = index;
      this.cutoffError = error;
    }
  }

  /** Stops for the deadline: everything from `index` on is reported, so the next batch resumes there. */
  deadline(index: number): void {
    const error = new DeadlineReachedError(this.seq(index), this.config.deadlineMarginMs);
    if (!this.#deadlineLogged) {
      this.#deadlineLogged = true;
      this.logger.warn({ sequenceNumber: this.seq(index), timeLeftMs: this.timeLeft() }, error.message);
    }
    this.fail(index, error);
  }

  /** The batch index of a sequence number of this batch, or undefined. */
  indexOf(sequenceNumber: unknown): number | undefined {
    if (typeof sequenceNumber !== 'string') return undefined;
    if (this.#seqIndex === undefined) {
      this.#seqIndex = new Map();
      for (let i = 0; i < this.n; i++) this.#seqIndex.set(this.seq(i), i);
    }
    return this.#seqIndex.get(sequenceNumber);
  }

  /** Whether `error` says record `index` itself is malformed (thrown by its getters on first read). */
  isPoison(error: unknown, index: number): error is MalformedRecordError {
    return error instanceof MalformedRecordError && error.sequenceNumber === this.seq(index);
  }

  /**
   * A malformed record: counted, logged and given up at once (retrying cannot fix it), and routed
   * nowhere else, so no later sink trips over it again.
   */
  malformed(index: number, error: MalformedRecordError, where: string | undefined, attempts = 1): void {
    this.metrics.malformed++;
    this.masks[index] = 0;
    this.logger.warn(
      { err: error, sequenceNumber: this.seq(index), ...(where === undefined ? {} : { sink: where }) },
      'malformed stream record',
    );
    this.giveUp(index, 'malformed', error, where === undefined ? 0 : attempts, where);
  }

  /** Buffers a record's dead letter, or fails it when there is nowhere to send it. */
  giveUp(
    index: number,
    reason: DeadLetterReason,
    error: unknown,
    attempts: number,
    sinkName: string | undefined,
  ): void {
    if (this.config.deadLetter === undefined) {
      this.logger.error(
        { err: error, sequenceNumber: this.seq(index), reason },
        'giving up on a record but no dead-letter sink is configured: reporting it failed',
      );
      this.fail(index, error);
      return;
    }
    const entry = deadLetterEntry(this, index, reason, error, attempts, sinkName);
    if (this.#givenUp === undefined) this.#givenUp = [{ index, entry }];
    else this.#givenUp.push({ index, entry });
  }

  /** The dead letters of records before the cut-off, in the order they were given up, with the lowest index among them. */
  dueDeadLetters(): { entries: DeadLetterEntry[]; lowest: number } | undefined {
    if (this.#givenUp === undefined) return undefined;
    const entries: DeadLetterEntry[] = [];
    let lowest = this.n;
    for (const d of this.#givenUp) {
      if (d.index >= this.cutoff) continue;
      entries.push(d.entry);
      if (d.index < lowest) lowest = d.index;
    }
    return entries.length === 0 ? undefined : { entries, lowest };
  }

  /** Lambda's partial batch response: nothing, or the first record not done. */
  response(): BatchResponse {
    if (this.cutoff === this.n) return { batchItemFailures: [] };
    this.logger.warn(
      { err: this.cutoffError, itemIdentifier: this.seq(this.cutoff), notDone: this.n - this.cutoff },
      'batch partially failed: Lambda retries from the reported record',
    );
    return { batchItemFailures: [{ itemIdentifier: this.seq(this.cutoff) }] };
  }
}
