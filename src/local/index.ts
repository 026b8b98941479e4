export type { CheckpointData, ShardCheckpoint } from './checkpoint.js';
export { CheckpointStore } from './checkpoint.js';
export type { Clock } from './clock.js';
export { ManualClock, systemClock } from './clock.js';
export type {
  FailureCondition,
  FailureDestination,
  S3FailureDestinationOptions,
  S3InvocationRecord,
  StreamInvocationRecord,
} from './destinations.js';
export { MemoryFailureDestination, S3FailureDestination, SqsFailureDestination } from './destinations.js';
export type { DynamoDbLocal, DynamoDbLocalOptions } from './dynamodb-local.js';
export { LOCAL_CREDENTIALS, LOCAL_REGION, startDynamoDbLocal } from './dynamodb-local.js';
export type {
  EmulatorEvent,
  EventSourceMappingOptions,
  InvocationOutcome,
  ShardInput,
  ShardResult,
  StreamHandler,
  StreamHandlerEvent,
  StreamHandlerResult,
} from './emulator.js';
export { DEFAULT_STALL_AFTER_ATTEMPTS, EventSourceMappingEmulator } from './emulator.js';
export { isLocalEndpoint } from './endpoint.js';
export type { StalledBatch } from './errors.js';
export {
  CheckpointError,
  EmulatorStoppedError,
  HandlerLoadError,
  HandlerTimeoutError,
  JavaMissingError,
  LocalServerStartError,
  ReplayFileError,
  ReplayStalledError,
  ServerlessConfigError,
} from './errors.js';
export type { EventBuilderOptions } from './events.js';
export { StreamEventBuilder, streamEvents } from './events.js';
export type { LoadHandlerOptions } from './handler-loader.js';
export { loadHandler, resolveHandlerModule } from './handler-loader.js';
export type { FakeContextOptions } from './lambda-context.js';
export { createLambdaContext } from './lambda-context.js';
export type { LocalAws, LocalAwsOptions } from './local-aws.js';
export { connectLocalAws, startLocalAws } from './local-aws.js';
export type {
  PollerEvent,
  PollOptions,
  ShardStream,
  StartingPosition,
  StreamPollerOptions,
  StreamsApi,
} from './poller.js';
export { StreamPoller } from './poller.js';
export type { CaptureOptions, ReplayOptions, ReplayResult } from './replay.js';
export { capture, failureLine, RepeatedLineWriter, readReplayFile, replay } from './replay.js';
// useLocalAws lives in ./vitest.js so that importing tidewater/local never loads vitest.
export type {
  InfraOptions,
  InfraPlan,
  InfraSettings,
  LocalQueue,
  LocalResourceRef,
  LocalResources,
  LocalResourcesOptions,
  TemplatePlan,
  TemplateResources,
} from './resources.js';
export {
  createLocalResources,
  InfraDefinitionError,
  LocalResourceConflictError,
  planLocalResources,
} from './resources.js';
export type { S3Server, S3ServerMiddleware, S3ServerOptions, S3ServerRequestContext } from './s3-server.js';
export { S3_STORAGE_CLASSES, startS3Server } from './s3-server.js';
export type {
  ServerlessConfigOptions,
  StreamEventSettings,
  StreamFunctionSettings,
} from './serverless-config.js';
export {
  handlerFile,
  loadServerlessConfig,
  ServerlessConfig,
  toEmulatorOptions,
} from './serverless-config.js';
export type {
  ResourceReferences,
  ServiceResources,
  ServiceResourcesOptions,
  UnresolvedVariable,
} from './service-resources.js';
export { createServiceResources, planServiceResources, resolveEnvironment } from './service-resources.js';
export type { LocalSqsMessage, SqsServer } from './sqs-server.js';
export { startSqsServer } from './sqs-server.js';
