import pRetry, { AbortError } from 'p-retry';
import { judgeTtl } from '../records/check-ttl.js';
import { MalformedRecordError } from '../records/errors.js';
import type { ClassifiedRecord, RecordKind } from '../records/types.js';
import type { DeadLetterEntry, DeadLetterReason, Sink } from '../sinks/types.js';
import { type CompiledConfig, type HandlerContext, KIND_BIT, type PipelineLogger } from './config.js';
import { DeadlineReachedError, SinkContractError, UnroutedRecordError } from './errors.js';
import { InvocationMetrics } from './metrics.js';

/** The parts of a Lambda context the pipeline reads. A real `Context` fits. */
export interface InvocationContext {
  readonly awsRequestId?: string;
  getRemainingTimeInMillis?(): number;
}

/** Records (by batch index) that failed in one attempt, with their errors. */
type Failures = Map<number, unknown>;

const KIND_INDEX: Readonly<Record<RecordKind, number>> = {
  insert: 0,
  modify: 1,
  'user-delete': 2,
  'ttl-delete': 3,
};

/** Thrown inside p-retry to ask for another attempt; never escapes. */
class PendingRetry extends Error {
  override name = 'PendingRetry';
}

function serializeError(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'NonError', message: String(error) };
}

function sequenceNumberOf(raw: unknown): string | undefined {
  const d = (raw as { dynamodb?: { SequenceNumber?: unknown } } | null | undefined)?.dynamodb;
  const s = d !== null && typeof d === 'object' ? d.SequenceNumber : undefined;
  return typeof s === 'string' && s !== '' ? s : undefined;
}

function eventIdOf(raw: unknown): string | undefined {
  const id = (raw as { eventID?: unknown } | null | undefined)?.eventID;
  return typeof id === 'string' ? id : undefined;
}

/**
 * What handlers and sinks receive as their context: the invocation's signal, logger and time left,
 * each made on first use. A class rather than an object literal with getters: V8 builds such a
 * literal on a slow path that allocates in the old generation, and one per invocation was enough
 * to make full collections several times more frequent (bench: the archive pipeline at batch 100
 * spent about a third of its time in GC).
 */
class InvocationContextView implements HandlerContext {
  readonly #invocation: Invocation;
  readonly remainingTimeMs: () => number;

  constructor(invocation: Invocation) {
    this.#invocation = invocation;
    this.remainingTimeMs = () => invocation.timeLeft();
  }

  get signal(): AbortSignal {
    return this.#invocation.signal;
  }

  get logger(): PipelineLogger {
    return this.#invocation.logger;
  }
}

/**
 * The state of one batch while it is processed. `cutoff` is the batch index of the first record
 * that is not done; every failure only ever lowers it, and no stage starts work at or beyond it,
 * so the response (the sequence number at `cutoff`) is always the lowest failed record.
 */
export class Invocation {
  readonly config: CompiledConfig;
  readonly n: number;
  readonly raws: readonly unknown[];
  readonly seqs: readonly string[];
  readonly records: (ClassifiedRecord | undefined)[];
  /** Per record, the bits of the sinks it is routed to. */
  readonly masks: number[];
  readonly metrics: InvocationMetrics;
  readonly context: HandlerContext;
  cutoff: number;
  cutoffError: unknown;
  readonly #deadLetters: { index: number; entry: DeadLetterEntry }[] = [];
  /** Per sink, the lowest index handed to it: a failed flush fails from there. */
  readonly #firstWritten: number[];
  readonly #lambda: InvocationContext | undefined;
  // Made on first use: most batches never log and never look at the signal, and both cost per invocation.
  #controller: AbortController | undefined;
  #logger: PipelineLogger | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #seqIndex: Map<string, number> | undefined;
  #deadlineLogged = false;

  constructor(
    config: CompiledConfig,
    raws: readonly unknown[],
    seqs: readonly string[],
    lambda?: InvocationContext,
  ) {
    this.config = config;
    this.n = raws.length;
    this.raws = raws;
    this.seqs = seqs;
    this.records = new Array(this.n);
    this.masks = new Array<number>(this.n).fill(0);
    this.metrics = new InvocationMetrics(config.sinks.length);
    this.metrics.records = this.n;
    this.cutoff = this.n;
    this.#firstWritten = new Array<number>(config.sinks.length).fill(Number.POSITIVE_INFINITY);
    this.#lambda = lambda;
    this.context = new InvocationContextView(this);
    const left = this.timeLeft();
    if (Number.isFinite(left)) {
      this.#timer = setTimeout(() => this.#abort(), Math.max(0, left));
      this.#timer.unref?.();
    }
  }

  /** The invocation's child logger: requestId, stream and sequence range on every line. */
  get logger(): PipelineLogger {
    if (this.#logger === undefined) {
      const first = this.raws[0] as { eventSourceARN?: unknown } | undefined;
      this.#logger = this.config.logger.child({
        requestId: this.#lambda?.awsRequestId,
        eventSourceARN: typeof first?.eventSourceARN === 'string' ? first.eventSourceARN : undefined,
        firstSequenceNumber: this.seqs[0],
        lastSequenceNumber: this.seqs[this.n - 1],
        records: this.n,
      });
    }
    return this.#logger;
  }

  /** Aborted at the deadline margin; made on first use. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) this.#controller = new AbortController();
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
    const signal = this.signal;
    if (!signal.aborted) {
      this.#controller!.abort(new DeadlineReachedError(this.seqs[this.cutoff], this.config.deadlineMarginMs));
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
    const error = new DeadlineReachedError(this.seqs[index], this.config.deadlineMarginMs);
    if (!this.#deadlineLogged) {
      this.#deadlineLogged = true;
      this.logger.warn({ sequenceNumber: this.seqs[index], timeLeftMs: this.timeLeft() }, error.message);
    }
    this.fail(index, error);
  }

  /** Parses, classifies, routes and health-checks every record; malformed ones go to dead-letter. */
  prepare(): number[] {
    const { config, metrics, n } = this;
    const { routes, handledKinds, ttlAttribute } = config;
    const now = config.clock();
    const nowSeconds = now / 1000;
    const valid: number[] = [];
    for (let i = 0; i < n; i++) {
      let record: ClassifiedRecord;
      try {
        record = config.parse(this.raws[i]);
      } catch (error) {
        if (!(error instanceof MalformedRecordError)) throw error;
        this.#malformed(i, error, undefined);
        continue;
      }
      this.records[i] = record;
      const kind = record.kind;
      if (kind === 'insert') metrics.inserts++;
      else if (kind === 'modify') metrics.modifies++;
      else if (kind === 'user-delete') metrics.userDeletes++;
      else metrics.ttlDeletes++;
      const created = record.approximateCreationTime;
      if (created !== undefined) {
        const age = now - created * 1000;
        if (age > metrics.iteratorAgeMs) metrics.iteratorAgeMs = age;
      }
      if (ttlAttribute !== undefined && (kind === 'insert' || kind === 'modify'))
        this.#checkTtl(record, nowSeconds);
      const bit = KIND_BIT[kind];
      let mask = 0;
      let r = 0;
      try {
        for (; r < routes.length; r++) {
          const route = routes[r]!;
          if (route.test === undefined ? (route.kindMask & bit) !== 0 : route.test(record))
            mask |= route.sinkMask;
        }
      } catch (error) {
        if (this.#isPoison(error, i)) {
          this.#malformed(i, error, `route:${routes[r]!.name}`);
          continue;
        }
        // A throwing predicate is a bug in the config: retrying may help (a fixed deploy), dropping would lose data.
        this.logger.error(
          { err: error, sequenceNumber: record.sequenceNumber, route: routes[r]!.name },
          'route predicate threw',
        );
        this.fail(i, error);
        continue;
      }
      this.masks[i] = mask;
      if (mask === 0 && (handledKinds & bit) === 0) {
        metrics.unrouted++;
        if (config.onUnrouted === 'dead-letter')
          this.giveUp(i, 'unrouted', new UnroutedRecordError(record), 0, undefined);
        else if (config.onUnrouted === 'fail') this.fail(i, new UnroutedRecordError(record));
        continue;
      }
      valid.push(i);
    }
    return valid;
  }

  #checkTtl(record: ClassifiedRecord, nowSeconds: number): void {
    const image = record.raw.dynamodb.NewImage;
    // KEYS_ONLY / OLD_IMAGE streams carry no new image: nothing to judge.
    if (image === undefined) return;
    const check = judgeTtl(image, this.config.ttlAttribute!, nowSeconds);
    if (check.expires) return;
    this.metrics.ttlNeverExpires++;
    this.logger.warn(
      {
        eventID: record.eventID,
        sequenceNumber: record.sequenceNumber,
        Keys: record.raw.dynamodb.Keys,
        ttlAttribute: this.config.ttlAttribute,
        ttlProblem: check.reason,
        ...(this.config.logImages ? { NewImage: image } : {}),
      },
      check.message,
    );
  }

  /** Runs one lane (the whole batch in ordered mode, one item key in per-key mode) in stream order. */
  async runLane(lane: readonly number[]): Promise<void> {
    const { config } = this;
    if (config.handledKinds !== 0) {
      for (let k = 0; k < lane.length; k++) {
        const i = lane[k]!;
        if (i >= this.cutoff) break;
        const record = this.records[i]!;
        const handler = config.handlers[KIND_INDEX[record.kind]];
        if (handler === undefined) continue;
        if (this.outOfTime()) return this.deadline(this.#firstUndone(lane, i, 0));
        try {
          await handler(record, this.context);
        } catch (error) {
          if (this.#isPoison(error, i)) {
            this.#malformed(i, error, `handler:${record.kind}`);
            continue;
          }
          await this.#retry(`handler:${record.kind}`, new Map([[i, error]]), async () => {
            try {
              await handler(record, this.context);
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
      const indices: number[] = [];
      const batch: ClassifiedRecord[] = [];
      for (let k = 0; k < lane.length; k++) {
        const i = lane[k]!;
        if (i >= this.cutoff) break;
        if ((this.masks[i]! & bit) !== 0) {
          indices.push(i);
          batch.push(this.records[i]!);
        }
      }
      if (indices.length === 0) continue;
      if (this.outOfTime()) return this.deadline(this.#firstUndone(lane, Number.POSITIVE_INFINITY, s));
      await this.#runSink(s, indices, batch);
    }
  }

  /** The first record of the lane with work left: a handler not yet run (from `handlerFrom`) or a sink from `sinkFrom` on. */
  #firstUndone(lane: readonly number[], handlerFrom: number, sinkFrom: number): number {
    const pending = ~((1 << sinkFrom) - 1);
    const handled = this.config.handledKinds;
    for (const i of lane) {
      if (i >= this.cutoff) break;
      if ((this.masks[i]! & pending) !== 0) return i;
      if (i >= handlerFrom && (handled & KIND_BIT[this.records[i]!.kind]) !== 0) return i;
    }
    return this.cutoff;
  }

  async #runSink(s: number, indices: number[], batch: ClassifiedRecord[]): Promise<void> {
    const sink = this.config.sinks[s]!;
    this.metrics.routed[s]! += indices.length;
    if (indices[0]! < this.#firstWritten[s]!) this.#firstWritten[s] = indices[0]!;
    const failures = await this.#write(sink, indices, batch);
    if (failures === undefined) return;
    await this.#retry(sink.name, failures, (pending) =>
      this.#write(
        sink,
        pending,
        pending.map((i) => this.records[i]!),
      ),
    );
  }

  /** One sink call. A throw fails every record given; reported failures are mapped back to batch indices. */
  async #write(
    sink: Sink,
    indices: readonly number[],
    batch: readonly ClassifiedRecord[],
  ): Promise<Failures | undefined> {
    let failed: readonly { sequenceNumber: string; error: unknown }[] | undefined;
    for (;;) {
      try {
        failed = (await sink.write(batch, this.context))?.failed;
        break;
      } catch (error) {
        // Images are checked when first read: a sink that hits a malformed one throws for that
        // record alone. It is poison, not a sink outage: dead-letter it and give the sink the
        // rest again at once (sinks are idempotent), without spending a retry attempt on them.
        const at = this.#poisonAt(error, indices);
        if (at < 0) return new Map(indices.map((i) => [i, error]));
        this.#malformed(indices[at]!, error as MalformedRecordError, sink.name);
        // Without a dead-letter sink the record was failed instead, lowering the cutoff: nothing
        // at or after it may start. And each rerun is a new sink call, so it minds the deadline.
        const keptIndices: number[] = [];
        const keptBatch: ClassifiedRecord[] = [];
        for (let k = 0; k < indices.length; k++) {
          if (k === at || indices[k]! >= this.cutoff) continue;
          keptIndices.push(indices[k]!);
          keptBatch.push(batch[k]!);
        }
        indices = keptIndices;
        batch = keptBatch;
        if (indices.length === 0) return undefined;
        if (this.outOfTime()) {
          this.deadline(indices[0]!);
          return undefined;
        }
      }
    }
    if (failed === undefined || failed.length === 0) return undefined;
    const given = new Set(indices);
    const out: Failures = new Map();
    for (const failure of failed) {
      const i = this.#indexOf(failure?.sequenceNumber);
      if (i === undefined || !given.has(i)) {
        const error = new SinkContractError(sink.name, failure?.sequenceNumber);
        this.logger.error({ err: error }, error.message);
        return new Map(indices.map((j) => [j, error]));
      }
      out.set(i, failure.error);
    }
    return out;
  }

  #indexOf(sequenceNumber: unknown): number | undefined {
    if (typeof sequenceNumber !== 'string') return undefined;
    if (this.#seqIndex === undefined) {
      this.#seqIndex = new Map();
      for (let i = 0; i < this.n; i++) this.#seqIndex.set(this.seqs[i]!, i);
    }
    return this.#seqIndex.get(sequenceNumber);
  }

  /**
   * Bounded in-process retries of the failed records only, with exponential backoff and jitter.
   * Non-retryable and too-old records are given up at once; after the last attempt the rest are
   * given up (dead-lettered). The deadline interrupts the backoff: what is still pending then is
   * reported as failed, not dead-lettered, because it was never given its attempts.
   */
  async #retry(
    label: string,
    first: Failures,
    again: (pending: number[]) => Promise<Failures | undefined>,
  ): Promise<void> {
    const { config } = this;
    const lastError = new Map<number, unknown>();
    let attempt = 1;
    let pending = this.#sortOut(first, attempt, label, lastError);
    if (pending.length === 0) return;
    if (config.attempts > 1) {
      try {
        await pRetry(
          async (n) => {
            if (n === 1) throw new PendingRetry();
            if (this.outOfTime())
              throw new AbortError(new DeadlineReachedError(this.seqs[pending[0]!], config.deadlineMarginMs));
            attempt = n;
            this.metrics.retries += pending.length;
            const failures = await again(pending);
            pending = failures === undefined ? [] : this.#sortOut(failures, n, label, lastError);
            if (pending.length > 0) throw new PendingRetry();
          },
          {
            retries: config.attempts - 1,
            factor: 2,
            minTimeout: config.baseDelayMs,
            maxTimeout: config.maxDelayMs,
            randomize: true,
            signal: this.context.signal,
          },
        );
      } catch (error) {
        // p-retry rejects with the AbortError's cause or the signal's reason when the deadline cut the backoff.
        if (error instanceof DeadlineReachedError) return this.deadline(pending[0]!);
        if (!(error instanceof PendingRetry)) throw error;
      }
    }
    for (const i of pending) this.giveUp(i, 'retries-exhausted', lastError.get(i), attempt, label);
  }

  /** Splits an attempt's failures: records worth another attempt (returned, in stream order) and records given up. */
  #sortOut(failures: Failures, attempt: number, label: string, lastError: Map<number, unknown>): number[] {
    const { config } = this;
    const pending: number[] = [];
    const now = config.clock();
    for (const [i, error] of failures) {
      if (this.#isPoison(error, i)) {
        this.#malformed(i, error, label, attempt);
        continue;
      }
      lastError.set(i, error);
      this.logger.debug({ err: error, sequenceNumber: this.seqs[i], attempt, sink: label }, 'record failed');
      if (config.retryable !== undefined && !config.retryable(error)) {
        this.giveUp(i, 'retries-exhausted', error, attempt, label);
        continue;
      }
      const created = this.records[i]?.approximateCreationTime;
      if (created !== undefined && now - created * 1000 > config.maxRecordAgeMs) {
        this.giveUp(i, 'record-too-old', error, attempt, label);
        continue;
      }
      pending.push(i);
    }
    return pending.sort((a, b) => a - b);
  }

  /** Whether `error` says record `index` itself is malformed (thrown by its getters on first read). */
  #isPoison(error: unknown, index: number): error is MalformedRecordError {
    return error instanceof MalformedRecordError && error.sequenceNumber === this.seqs[index];
  }

  /** The position in `indices` of the record a MalformedRecordError names, or -1. */
  #poisonAt(error: unknown, indices: readonly number[]): number {
    if (!(error instanceof MalformedRecordError)) return -1;
    for (let k = 0; k < indices.length; k++) if (this.#isPoison(error, indices[k]!)) return k;
    return -1;
  }

  /**
   * A malformed record: counted, logged and dead-lettered at once (retrying cannot fix it), and
   * routed nowhere else, so no later sink trips over it again.
   */
  #malformed(index: number, error: MalformedRecordError, where: string | undefined, attempts = 1): void {
    this.metrics.malformed++;
    this.masks[index] = 0;
    this.logger.warn(
      { err: error, sequenceNumber: this.seqs[index], ...(where === undefined ? {} : { sink: where }) },
      'malformed stream record',
    );
    this.giveUp(index, 'malformed', error, where === undefined ? 0 : attempts, where);
  }

  /** Dead-letters a record (sent at the end, if still before the cutoff), or fails it when there is nowhere to send it. */
  giveUp(
    index: number,
    reason: DeadLetterReason,
    error: unknown,
    attempts: number,
    sinkName: string | undefined,
  ): void {
    if (this.config.deadLetter === undefined) {
      this.logger.error(
        { err: error, sequenceNumber: this.seqs[index], reason },
        'giving up on a record but no dead-letter sink is configured: reporting it failed',
      );
      this.fail(index, error);
      return;
    }
    const raw = this.raws[index];
    const parsed = this.records[index];
    const arn = parsed?.eventSourceARN ?? (raw as { eventSourceARN?: unknown } | null)?.eventSourceARN;
    this.#deadLetters.push({
      index,
      entry: {
        reason,
        record: parsed?.raw ?? raw,
        eventID: parsed?.eventID ?? eventIdOf(raw),
        sequenceNumber: this.seqs[index],
        eventSourceARN: typeof arn === 'string' ? arn : undefined,
        error: serializeError(error),
        attempts,
        ...(sinkName === undefined ? {} : { sinkName }),
        at: new Date(this.config.clock()).toISOString(),
      },
    });
  }

  /** Flushes buffering sinks, then sends the dead letters of records before the cutoff, in one call. */
  async finish(): Promise<void> {
    const { config } = this;
    for (let s = 0; s < config.sinks.length; s++) {
      const sink = config.sinks[s]!;
      const first = this.#firstWritten[s]!;
      if (sink.flush === undefined || first === Number.POSITIVE_INFINITY) continue;
      try {
        await sink.flush(this.context);
      } catch (error) {
        this.logger.error(
          { err: error, sink: sink.name },
          'sink flush failed: its records are reported failed',
        );
        this.fail(first, error);
      }
    }
    const due = this.#deadLetters.filter((d) => d.index < this.cutoff);
    if (due.length === 0) return;
    try {
      await config.deadLetter!.send(
        due.map((d) => d.entry),
        this.context,
      );
      this.metrics.deadLettered += due.length;
      for (const d of due) {
        this.logger.warn(
          {
            sequenceNumber: d.entry.sequenceNumber,
            reason: d.entry.reason,
            error: d.entry.error,
            sink: d.entry.sinkName,
          },
          'record dead-lettered',
        );
      }
    } catch (error) {
      this.logger.error({ err: error }, 'dead-letter send failed: those records are reported failed');
      let lowest = this.n;
      for (const d of due) if (d.index < lowest) lowest = d.index;
      this.fail(lowest, error);
    }
  }
}

export { eventIdOf, sequenceNumberOf };
