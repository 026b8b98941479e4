import middy, { type MiddlewareObj } from '@middy/core';
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import type { PipelineConfig } from './config.js';
import { type BatchResponse, createPipeline, type Pipeline } from './engine.js';

/**
 * The pipeline as a middy middleware, for users with their own middy stack. Its `before` processes
 * the batch and responds early with the partial batch response, so the wrapped handler is not
 * called: `.use()` it last, after middlewares that must see the event first.
 */
export function streamProcessor(
  config: PipelineConfig | Pipeline,
): MiddlewareObj<DynamoDBStreamEvent, BatchResponse, Error, Context> {
  const pipeline = 'process' in config && 'config' in config ? (config as Pipeline) : createPipeline(config);
  return {
    name: 'tidewater-stream-processor',
    before: (request) => pipeline.process(request.event, request.context),
  };
}

/**
 * A Lambda handler for a DynamoDB stream, already wrapped by middy (`.use()` more middlewares).
 * The config is validated here, at cold start: a typo fails the deployment's first invocation
 * instead of a batch. Enable ReportBatchItemFailures on the event source mapping.
 */
export function createStreamHandler(config: PipelineConfig) {
  const pipeline = createPipeline(config);
  return middy<DynamoDBStreamEvent, BatchResponse, Error, Context>().handler((event, context) =>
    pipeline.process(event, context),
  );
}
