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
  TtlHealth,
  UnroutedPolicy,
  ValidatedSchema,
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
export type { KinesisSource, KinesisSourceOptions, StreamSource } from './kinesis-source.js';
export { kinesisSource } from './kinesis-source.js';
export type { InvocationContext } from './ledger.js';
export { createStreamHandler, streamProcessor } from './middleware.js';
export type { StandardSchemaV1 } from './standard-schema.js';
export type { SinkTracer, TracerLike, TraceSegmentLike, TraceSubsegmentLike } from './tracing.js';
export { sinkTracer } from './tracing.js';
export { ttlHealth } from './ttl-health.js';
export { validated } from './validated.js';
export { NotAWindowEventError, WindowStateTooLargeError } from './window-errors.js';
export type { TimeWindow, TimeWindowEvent, TimeWindowResponse } from './window-event.js';
export { WINDOW_STATE_LIMIT_BYTES } from './window-event.js';
export type { WindowHandlerConfig, WindowHandlerState, WindowInfo } from './window-handler.js';
export { createWindowHandler } from './window-handler.js';
