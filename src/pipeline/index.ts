export type {
  HandlerContext,
  KindHandlers,
  MetricsConfig,
  MetricsTarget,
  MetricsWriter,
  OrderingConfig,
  PipelineConfig,
  PipelineLogger,
  RecordPredicate,
  RetryConfig,
  RouteCondition,
  RouteConfig,
  UnroutedPolicy,
} from './config.js';
export { route } from './config.js';
export type { BatchItemFailure, BatchResponse, Pipeline } from './engine.js';
export { createPipeline, processBatch } from './engine.js';
export {
  DeadlineReachedError,
  SinkContractError,
  UnreadableSequenceNumberError,
  UnroutedRecordError,
} from './errors.js';
export type { InvocationContext } from './ledger.js';
export { createStreamHandler, streamProcessor } from './middleware.js';
