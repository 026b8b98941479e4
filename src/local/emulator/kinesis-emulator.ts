import type { Context, KinesisStreamBatchResponse, KinesisStreamEvent } from 'aws-lambda';
import type { TimeWindowEvent } from '../../pipeline/window-event.js';
import type { LambdaKinesisRecord } from '../../records/index.js';
import { MappingEmulator, type MappingOptions } from './emulator.js';
import type { StreamHandlerResult } from './mapping-options.js';
import { KINESIS_SOURCE } from './record-source.js';

/**
 * The event the Kinesis mapping passes: a Kinesis event; with a tumbling window also the
 * window, state, shardId and flags (the guide's KinesisTimeWindowEvent).
 */
export type KinesisHandlerEvent = KinesisStreamEvent &
  Partial<Omit<TimeWindowEvent<Record<string, unknown>>, 'Records'>>;

type KinesisHandlerShape = {
  // A method's parameters are compared both ways, so createStreamHandler's handler (declared for
  // either kind of stream event) fits, as in mapping-options.ts's StreamHandler.
  handle(
    event: KinesisHandlerEvent,
    context: Context,
    // biome-ignore lint/suspicious/noExplicitAny: any handler arity must be assignable; Lambda passes two arguments.
    ...rest: any[]
  ):
    | Promise<StreamHandlerResult | KinesisStreamBatchResponse>
    | StreamHandlerResult
    | KinesisStreamBatchResponse;
};

/** A Lambda handler for a Kinesis stream: what `createStreamHandler` returns, or a plain function. */
export type KinesisStreamHandler = KinesisHandlerShape['handle'];

/** The Kinesis mapping's settings: the same as the DynamoDB mapping's (Lambda's parameter tables agree). */
export type KinesisMappingOptions = MappingOptions<KinesisStreamHandler>;

/**
 * Lambda's Kinesis Data Streams event source mapping, locally: the rules of the DynamoDB one,
 * applied as the Kinesis pages of the Lambda guide state them — batches and checkpoints by Kinesis
 * sequence number, ParallelizationFactor keeping order per partition key, record age and tumbling
 * windows from approximateArrivalTimestamp, FilterCriteria on the decoded `data`, and on-failure
 * records naming the batch under KinesisBatchInfo. Feed it with KinesisShardReader.
 */
export class KinesisMappingEmulator extends MappingEmulator<LambdaKinesisRecord> {
  constructor(options: KinesisMappingOptions) {
    super(options, KINESIS_SOURCE);
  }
}
