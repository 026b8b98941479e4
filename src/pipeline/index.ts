export type {
  HandlerContext,
  ItemSchema,
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
  SinkTaking,
  UnroutedPolicy,
} from './config.js';
export { route } from './config.js';
export type { BatchItemFailure, BatchResponse, Pipeline } from './engine.js';
export { createPipeline, processBatch } from './engine.js';
export type { ImageName, ImageSchemaProblem } from './errors.js';
export {
  DeadlineReachedError,
  ImageSchemaError,
  InvalidImageError,
  SinkContractError,
  UnreadableSequenceNumberError,
  UnroutedRecordError,
} from './errors.js';
export type { InvocationContext } from './ledger.js';
export { createStreamHandler, streamProcessor } from './middleware.js';
export type { StandardSchemaV1 } from './standard-schema.js';
