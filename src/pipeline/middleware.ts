import middy, { type MiddlewareObj } from '@middy/core';
import type { Context, DynamoDBStreamEvent, KinesisStreamEvent } from 'aws-lambda';
import type { Item } from '../records/types.js';
import type { PipelineConfig } from './config.js';
import { type BatchResponse, createPipeline, type Pipeline } from './engine.js';

/**
 * The pipeline as a middy middleware, for users with their own middy stack. Its `before` processes
 * the batch and responds early with the partial batch response, so the wrapped handler is not
 * called: `.use()` it last, after middlewares that must see the event first.
 */
/** What a stream handler takes: a DynamoDB stream batch, or a Kinesis one (the `source` option). */
type StreamEvent = DynamoDBStreamEvent | KinesisStreamEvent;

/** The pipeline as middy middleware: parses the event, runs the routes, returns the partial batch response. */
export function streamProcessor<T extends object = Item>(
  config: PipelineConfig<T> | Pipeline,
): MiddlewareObj<StreamEvent, BatchResponse, Error, Context> {
  const pipeline = 'process' in config && 'config' in config ? (config as Pipeline) : createPipeline(config);
  return {
    name: 'tidewater-stream-processor',
    before: (request) => pipeline.process(request.event, request.context),
  };
}

// Symbol.for: the CLI finds the pipeline of a handler bundled with its own copy of tidewater.
const HANDLER_PIPELINE = Symbol.for('tidewater.handler-pipeline');

/**
 * A Lambda handler for a DynamoDB stream, already wrapped by middy (`.use()` more middlewares).
 * The config is validated here, at cold start: a typo fails the deployment's first invocation
 * instead of a batch. Enable ReportBatchItemFailures on the event source mapping.
 */
export function createStreamHandler<T extends object = Item>(config: PipelineConfig<T>) {
  const pipeline = createPipeline(config);
  // No middy early timeout: the pipeline judges the deadline itself (deadlineMarginMs, default 1 s
  // before middy's 5 ms) and answers with a partial response, so the timer middy arms on every
  // invocation (a Timer, a promise and a race) could only ever turn that answer into a failed batch.
  const handler = middy<StreamEvent, BatchResponse, Error, Context>({ timeoutEarlyInMillis: 0 }).handler(
    (event, context) => pipeline.process(event, context),
  );
  // `tidewater backfill -f <function>` runs this pipeline over a table's items, with its own parser.
  Object.defineProperty(handler, HANDLER_PIPELINE, { value: pipeline });
  return handler;
}

/** @internal The pipeline a createStreamHandler handler runs; undefined for any other function. */
export function pipelineOfHandler(handler: unknown): Pipeline | undefined {
  if (typeof handler !== 'function') return undefined;
  return (handler as unknown as { [HANDLER_PIPELINE]?: Pipeline })[HANDLER_PIPELINE];
}
