import { defineOptions } from '../core/options.js';
import { MalformedRecordError } from '../records/errors.js';
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
  /**
   * The table (or tables) whose streaming destination the Kinesis stream is. A record whose change
   * data names another table is malformed (reason `foreign-table`): dead-lettered, never handed
   * to routes under that table's name. The Kinesis record does not say which table's destination
   * wrote it, so only this option can. Default: any table (a stream shared by several tables).
   */
  tableName?: string | readonly string[];
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
  tableName: {
    kind: 'custom',
    expected: 'a table name or a non-empty array of table names',
    check: (v: unknown) =>
      (typeof v === 'string' && v !== '') ||
      (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string' && x !== '')),
  },
});

/** The parser, refusing a record whose change data names a table not in `tables`. */
function ownTablesOnly(parse: RecordParser, tables: ReadonlySet<string>): RecordParser {
  return ((envelope: unknown) => {
    const record = parse(envelope);
    const table = record.tableName;
    if (table === undefined || !tables.has(table)) {
      throw new MalformedRecordError(
        'foreign-table',
        `the change data names a table of ${table?.length ?? 0} characters that is not among the stream's own (kinesisSource's tableName)`,
        { eventID: record.eventID, sequenceNumber: record.sequenceNumber },
      );
    }
    return record;
  }) as RecordParser;
}

/**
 * The `source` of a function triggered by a Kinesis data stream fed by the table's Kinesis
 * streaming destination: `createStreamHandler({ source: kinesisSource(), routes })`. Records are
 * decoded to the same classified records as a DynamoDB stream's; each batch is de-duplicated and
 * each item's records ordered by creation time (docs/kinesis.md).
 */
export function kinesisSource(options?: KinesisSourceOptions): KinesisSource {
  const { alsoDynamoDBStream, tableName } = readOptions(options ?? {});
  const tables =
    tableName === undefined ? undefined : new Set(typeof tableName === 'string' ? [tableName] : tableName);
  return {
    [KINESIS_SOURCE]: true,
    expected: alsoDynamoDBStream ? 'auto' : 'kinesis',
    parser: (parse) => {
      const parser = createRecordParser({ ...parse, source: 'kinesis' });
      return tables === undefined ? parser : ownTablesOnly(parser, tables);
    },
    order: orderKinesisBatch,
  };
}
