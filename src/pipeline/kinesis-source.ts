import { defineOptions } from '../core/options.js';
import {
  createRecordParser,
  type ExpectedSource,
  type ParseOptions,
  type RecordParser,
} from '../records/parse.js';
import { type OrderedBatch, orderKinesisBatch } from './kinesis-order.js';
import type { ReadBatch } from './read-batch.js';
import { KINESIS_SOURCE } from './source-option.js';

// Kinesis is opt-in, as matching() is for the filter compiler: only a handler that calls
// kinesisSource() links the Kinesis decoder and the ordering stage. A DynamoDB Streams handler's
// bundle carries neither, and a Kinesis batch sent to it still fails at once
// (EventSourceMismatchError: telling the sources apart needs no decoder).

/** Options of kinesisSource(): which sources a Kinesis function accepts, and duplicate handling. */
export interface KinesisSourceOptions {
  /**
   * Also take DynamoDB stream batches, each batch's first record saying which source it is from
   * (a function moving from one trigger to the other). Default false: a DynamoDB stream batch
   * fails whole with EventSourceMismatchError.
   */
  alsoDynamoDBStream?: boolean;
}

/** A handler's Kinesis stage, made by kinesisSource(): how its batches are parsed and ordered. */
export interface KinesisSource {
  readonly [KINESIS_SOURCE]: true;
  /** The batches the handler takes: `'kinesis'`, or `'auto'` with alsoDynamoDBStream. */
  readonly expected: Exclude<ExpectedSource, 'dynamodb-stream'>;
  /** The parser of the Kinesis records, with the handler's parse options. */
  parser(options: ParseOptions): RecordParser;
  /** De-duplicates a parsed batch and puts each item's records in creation-time order. */
  order(raws: readonly unknown[], read: ReadBatch): OrderedBatch;
}

/** The `source` option of createStreamHandler, createPipeline and createWindowHandler. */
export type StreamSource = 'dynamodb-stream' | KinesisSource;

const readOptions = /* @__PURE__ */ defineOptions<KinesisSourceOptions>()('kinesisSource', {
  alsoDynamoDBStream: { kind: 'boolean', default: false },
});

/**
 * The `source` of a function triggered by a Kinesis data stream fed by the table's Kinesis
 * streaming destination: `createStreamHandler({ source: kinesisSource(), routes })`. Records are
 * decoded to the same classified records as a DynamoDB stream's; each batch is de-duplicated and
 * each item's records ordered by creation time (docs/kinesis.md).
 */
export function kinesisSource(options?: KinesisSourceOptions): KinesisSource {
  const { alsoDynamoDBStream } = readOptions(options ?? {});
  return {
    [KINESIS_SOURCE]: true,
    expected: alsoDynamoDBStream ? 'auto' : 'kinesis',
    parser: (parse) => createRecordParser({ ...parse, source: 'kinesis' }),
    order: orderKinesisBatch,
  };
}
