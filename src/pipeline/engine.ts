import pLimit from 'p-limit';
import { streamRecordsOf } from '../records/parse.js';
import { type CompiledConfig, compileConfig, type PipelineConfig } from './config.js';
import { UnreadableSequenceNumberError } from './errors.js';
import { eventIdOf, Invocation, type InvocationContext, sequenceNumberOf } from './invocation.js';
import { publishMetrics } from './metrics.js';

export interface BatchItemFailure {
  itemIdentifier: string;
}

/** Lambda's partial batch response (ReportBatchItemFailures). */
export interface BatchResponse {
  batchItemFailures: BatchItemFailure[];
}

/** A validated, precompiled pipeline. Build it once per container, not per invocation. */
export interface Pipeline {
  readonly config: CompiledConfig;
  process(event: unknown, context?: InvocationContext): Promise<BatchResponse>;
}

const PIPELINE = Symbol('tidewater.pipeline');

export function createPipeline(config: PipelineConfig): Pipeline {
  const compiled = compileConfig(config);
  return {
    [PIPELINE]: true,
    config: compiled,
    process: (event: unknown, context?: InvocationContext) => run(compiled, event, context),
  } as Pipeline;
}

function isPipeline(value: unknown): value is Pipeline {
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
export function processBatch(
  event: unknown,
  pipeline: Pipeline | PipelineConfig,
  context?: InvocationContext,
): Promise<BatchResponse> {
  return isPipeline(pipeline)
    ? pipeline.process(event, context)
    : run(compileConfig(pipeline), event, context);
}

function groupByKey(invocation: Invocation, indices: readonly number[]): number[][] {
  // The raw Keys JSON is the item's identity: DynamoDB sends an item's key attributes the same way every time.
  const lanes = new Map<string, number[]>();
  for (const i of indices) {
    const key = JSON.stringify(invocation.records[i]!.raw.dynamodb.Keys);
    const lane = lanes.get(key);
    if (lane === undefined) lanes.set(key, [i]);
    else lane.push(i);
  }
  return [...lanes.values()];
}

async function run(
  config: CompiledConfig,
  event: unknown,
  context?: InvocationContext,
): Promise<BatchResponse> {
  const started = config.clock();
  const raws = streamRecordsOf(event);
  const n = raws.length;
  const seqs = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const seq = sequenceNumberOf(raws[i]);
    if (seq === undefined) throw new UnreadableSequenceNumberError(i, eventIdOf(raws[i]));
    seqs[i] = seq;
  }
  if (n === 0) return { batchItemFailures: [] };
  const invocation = new Invocation(config, raws, seqs, context);
  try {
    const valid = invocation.prepare();
    if (!config.perKey) await invocation.runLane(valid);
    else {
      const limit = pLimit(config.concurrency);
      await Promise.all(groupByKey(invocation, valid).map((lane) => limit(() => invocation.runLane(lane))));
    }
    await invocation.finish();
  } finally {
    invocation.dispose();
  }
  const { cutoff, metrics } = invocation;
  metrics.failed = n - cutoff;
  const finished = config.clock();
  if (config.metrics !== undefined) {
    try {
      publishMetrics(config, metrics, finished - started, finished);
    } catch (error) {
      invocation.logger.error({ err: error }, 'writing the metrics line failed');
    }
  }
  if (cutoff === n) return { batchItemFailures: [] };
  invocation.logger.warn(
    { err: invocation.cutoffError, itemIdentifier: seqs[cutoff], notDone: n - cutoff },
    'batch partially failed: Lambda retries from the reported record',
  );
  return { batchItemFailures: [{ itemIdentifier: seqs[cutoff]! }] };
}
