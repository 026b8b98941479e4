// Lambda's event source mapping for DynamoDB Streams and Kinesis Data Streams, locally: the emulator (batching, filters,
// retries, bisect, partial batch responses, on-failure destinations), the stream poller that
// feeds it, checkpoints, replay and capture files, and what a handler is called with (events,
// context, the loaded module). It reads records from any source and knows no config file.

export type { KinesisInvocationRecord, MappingInvocationRecord } from '../../records/on-failure-record.js';
export type { CheckpointData, ShardCheckpoint } from './checkpoint.js';
export type { Clock } from './clock.js';
export { ManualClock, systemClock } from './clock.js';
// The on-failure record's own types (StreamInvocationRecord, FailureCondition) are the root's.
export type { FailureDestination, S3FailureDestinationOptions, S3InvocationRecord } from './destinations.js';
export { MemoryFailureDestination, S3FailureDestination, SqsFailureDestination } from './destinations.js';
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
export type { StalledBatch } from './errors.js';
export {
  CheckpointError,
  EmulatorStoppedError,
  HandlerLoadError,
  HandlerTimeoutError,
  KinesisBridgeError,
  ReplayFileError,
  ReplayStalledError,
  UnstreamableRecordError,
} from './errors.js';
export type { LoadHandlerOptions } from './handler-loader.js';
export { loadHandler, resolveHandlerModule } from './handler-loader.js';
export type { KinesisBridgeFaults, KinesisBridgeOptions, KinesisBridgeResult } from './kinesis-bridge.js';
export { KinesisBridge } from './kinesis-bridge.js';
export type { KinesisCaptureOptions } from './kinesis-capture.js';
export { captureKinesis } from './kinesis-capture.js';
export type {
  KinesisHandlerEvent,
  KinesisMappingOptions,
  KinesisStreamHandler,
} from './kinesis-emulator.js';
export { KinesisMappingEmulator } from './kinesis-emulator.js';
export type { KinesisApi, KinesisReadOptions, KinesisShardReaderOptions } from './kinesis-reader.js';
export { KinesisShardReader } from './kinesis-reader.js';
export type { KinesisReplayOptions, KinesisReplayResult } from './kinesis-replay.js';
export { replayKinesis } from './kinesis-replay.js';
export { INVOCATION_PAYLOAD_LIMIT_BYTES } from './payload-limit.js';
export type {
  PollerEvent,
  PollRunOptions,
  ShardStream,
  StartingPosition,
  StreamPollerOptions,
  StreamsApi,
} from './poller.js';
export { StreamPoller } from './poller.js';
export { STREAM_RETENTION_MS } from './record-age.js';
export type { CaptureOptions, ReplayOptions, ReplayResult } from './replay.js';
export { capture, failureLine, RepeatedLineWriter, readReplayFile, replay } from './replay.js';
export type { EmulatorWaitTarget } from './wait-bound.js';
export { EmulatorWaitTimeoutError } from './wait-bound.js';
