import { eventRecordsOf } from '../records/parse.js';
import type { Item } from '../records/types.js';
import { compileConfig } from './compile.js';
import type { PipelineConfig } from './config.js';
import { sendDeadLetters } from './dead-letter.js';
import { deliverOrdered, deliverPerKey, flushSinks } from './deliver.js';
import type { OrderedBatch } from './kinesis-order.js';
import {
  type BatchResponse,
  closeLedger,
  contextShapeKeeper,
  type InvocationContext,
  loggerOf,
  openLedger,
  response,
} from './ledger.js';
import { publishMetrics, tallyRecords } from './metrics.js';
import type { CompiledConfig } from './plan.js';
import { readRecords, routeRecords } from './route.js';

export type { BatchItemFailure, BatchResponse } from './ledger.js';

/** A validated, precompiled pipeline. Build it once per container, not per invocation. */
export interface Pipeline {
  readonly config: CompiledConfig;
  process(event: unknown, context?: InvocationContext): Promise<BatchResponse>;
}

// Symbol.for: a pipeline made by another copy of tidewater (a bundled handler) is still recognized.
const PIPELINE = Symbol.for('tidewater.pipeline');

/** Compiles a pipeline configuration into a Pipeline that processes stream batches. */
export function createPipeline<T extends object = Item>(config: PipelineConfig<T>): Pipeline {
  return pipelineOf(compileConfig(config));
}

/**
 * @internal A pipeline over an already compiled config: how a backfill runs a user's pipeline with
 * its own record parser (records that carry the backfill's origin) without a public option for it.
 */
export function pipelineOf(compiled: CompiledConfig): Pipeline {
  return {
    // Marks a pipeline; its value keeps the per-invocation context's hidden class alive.
    [PIPELINE]: contextShapeKeeper(compiled),
    config: compiled,
    process: (event: unknown, context?: InvocationContext) => run(compiled, event, context),
  } as Pipeline;
}

/** @internal */
export function isPipeline(value: unknown): value is Pipeline {
  return value !== null && typeof value === 'object' && PIPELINE in value;
}

/**
 * Processes one DynamoDB stream batch and returns the partial batch response. Accepts a pipeline
 * from createPipeline (fast) or a config (compiled on every call: fine for scripts, not for Lambda).
 *
 * Throws — failing the whole batch, which Lambda retries — only when the input is not a stream
 * batch (NotAStreamEventError) or a record's sequence number is unreadable
 * (UnreadableSequenceNumberError): no valid partial response exists then.
 */
export function processBatch<T extends object = Item>(
  event: unknown,
  pipeline: Pipeline | PipelineConfig<T>,
  context?: InvocationContext,
): Promise<BatchResponse> {
  return isPipeline(pipeline)
    ? pipeline.process(event, context)
    : run(compileConfig(pipeline), event, context);
}

/**
 * The engine: read → route → deliver (handlers, sinks, retries) → flush and dead-letter → respond.
 * Every stage is a function of the ledger (the batch's state) and the compiled config.
 */
async function run(
  config: CompiledConfig,
  event: unknown,
  context?: InvocationContext,
): Promise<BatchResponse> {
  const started = config.clock();
  const { kinesis } = config;
  const batch = eventRecordsOf(event, kinesis === undefined ? 'dynamodb-stream' : kinesis.source.expected);
  let raws = batch.records;
  // eventRecordsOf says 'kinesis' only when the config has the Kinesis stage.
  const fromKinesis = batch.source === 'kinesis' ? kinesis : undefined;
  let read = readRecords(raws, fromKinesis === undefined ? config.parse : fromKinesis.parse);
  if (raws.length === 0) return { batchItemFailures: [] };
  let ordered: OrderedBatch | undefined;
  if (fromKinesis !== undefined) {
    ordered = fromKinesis.source.order(raws, read);
    raws = ordered.raws;
    read = ordered;
  }
  const ledger = openLedger(config, raws, read.records, read.errors, context);
  if (ordered !== undefined) {
    ledger.reportAt = ordered.reportAt;
    ledger.metrics.duplicates = ordered.duplicates;
    ledger.metrics.records += ordered.duplicates;
  }
  let routedAt: number;
  try {
    routedAt = routeRecords(ledger, config);
    if (config.validate !== undefined) {
      const validating = config.validate(ledger as never, config);
      if (validating !== undefined) await validating;
    }
    if (config.perKey) await deliverPerKey(ledger, config);
    else await deliverOrdered(ledger, config);
    // Awaited only when there is something to do: a batch that goes well costs no microtask here.
    const flushing = flushSinks(ledger, config);
    if (flushing !== undefined) await flushing;
    if (ledger.givenUp !== undefined) await sendDeadLetters(ledger);
  } finally {
    closeLedger(ledger);
  }
  const { metrics } = ledger;
  metrics.failed = ledger.n - ledger.cutoff;
  const finished = config.clock();
  if (config.metrics !== undefined) {
    try {
      publishMetrics(
        config.metrics,
        metrics,
        tallyRecords(ledger.records, metrics, routedAt),
        finished - started,
        finished,
      );
    } catch (error) {
      loggerOf(ledger).error({ err: error }, 'writing the metrics line failed');
    }
  }
  return response(ledger);
}
