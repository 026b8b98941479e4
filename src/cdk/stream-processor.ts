// A function on a DynamoDB table's stream, with the mapping settings tidewater's serverless service
// deploys (partial batch responses, bisect, retry and age limits, an on-failure destination, the
// filter from tidewater's builder, event-count metrics) and the alarms that say it is in trouble.

import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Duration } from 'aws-cdk-lib/core';
import { Construct } from 'constructs';
import { defineOptions } from '../core/options.js';
import { toFilterCriteria } from '../filters/criteria.js';
import type { FilterCriteria, FilterPattern } from '../filters/types.js';
import { destinationDeliveryFailuresAlarm, iteratorAgeAlarm, onFailureDeliveriesAlarm } from './alarms.js';
import { type FunctionSource, resolveFunction } from './function.js';
import { Grants } from './grants.js';
import { OnFailureDestination, type OnFailureTarget } from './on-failure.js';
import { secureQueue } from './queue.js';

/** Options of StreamProcessor: the table, function, filters and mapping settings. */
export interface StreamProcessorProps {
  /** The table whose stream feeds the function; it must have a stream (`stream:` on the Table). */
  readonly table: dynamodb.ITable;
  /** The function: an existing one, or `{ code, … }` to build one with its own role and log group. */
  readonly function: FunctionSource;
  /**
   * The records Lambda delivers: patterns from tidewater's builder (`[ttlDeletes()]`,
   * `[filterPattern(…)]`) or a FilterCriteria (`toFilterCriteria(…)`). Checked against Lambda's
   * limits at synth time. A record matching none is dropped by Lambda, never seen by the function.
   * Default: every record.
   */
  readonly filters?: readonly FilterPattern[] | FilterCriteria;
  /** Filters allowed on the mapping: 5 (Lambda's default quota), at most 10 once raised. */
  readonly maxFilters?: number;
  /** Records per invocation, 1 to 10000. Default 100. */
  readonly batchSize?: number;
  /** How long Lambda may wait to fill a batch, at most 300 seconds. Default 5 seconds. */
  readonly maxBatchingWindow?: Duration;
  /**
   * The function reports failed records (`batchItemFailures`, what tidewater's handlers return)
   * and Lambda retries from the first of them. Default true.
   */
  readonly reportBatchItemFailures?: boolean;
  /** Split a failing batch in two and retry each half, isolating a poison record. Default true. */
  readonly bisectBatchOnError?: boolean;
  /** Retries of a failing batch before the on-failure destination, 0 to 10000 (-1: until the record expires). Default 5. */
  readonly retryAttempts?: number;
  /** Records older than this go to the on-failure destination unprocessed, 60 seconds to 7 days. Default 1 day. */
  readonly maxRecordAge?: Duration;
  /**
   * Where Lambda sends what it gave up on: an SQS queue (the batch's position) or an S3 bucket
   * (position and records, under `aws/lambda/`). Default: a new queue, encrypted, TLS-only.
   */
  readonly onFailure?: OnFailureTarget;
  /** Where a new mapping starts: TRIM_HORIZON (the oldest record kept) or LATEST. Default TRIM_HORIZON. */
  readonly startingPosition?: lambda.StartingPosition;
  /** Batches processed at once per shard, 1 to 10 (order is kept per item key). Default 1. */
  readonly parallelizationFactor?: number;
  /** The iterator age alarm fires above this for 5 minutes. Default 5 minutes. */
  readonly iteratorAgeAlarmThreshold?: Duration;
  /** Whether the mapping polls. Default true. */
  readonly enabled?: boolean;
}

export const DEFAULT_MAX_RECORD_AGE = /* @__PURE__ */ Duration.days(1);

const DURATION = { kind: 'object', methods: ['toSeconds'], expected: 'a Duration' } as const;

const readProps = /* @__PURE__ */ defineOptions<StreamProcessorProps>()('StreamProcessor', {
  table: { kind: 'object', methods: ['grantStreamRead'], expected: 'a dynamodb.ITable', required: true },
  function: { kind: 'object', required: true },
  filters: { kind: 'object' },
  maxFilters: { kind: 'integer', min: 1, max: 10 },
  batchSize: { kind: 'integer', min: 1, max: 10_000, default: 100 },
  maxBatchingWindow: { ...DURATION, default: Duration.seconds(5) },
  reportBatchItemFailures: { kind: 'boolean', default: true },
  bisectBatchOnError: { kind: 'boolean', default: true },
  retryAttempts: { kind: 'integer', min: -1, max: 10_000, default: 5 },
  maxRecordAge: { ...DURATION, default: DEFAULT_MAX_RECORD_AGE },
  onFailure: {
    kind: 'custom',
    expected: 'an sqs.IQueue or an s3.IBucket',
    check: (v) => v !== null && typeof v === 'object' && ('queueArn' in v || 'bucketArn' in v),
  },
  startingPosition: {
    kind: 'enum',
    values: [lambda.StartingPosition.TRIM_HORIZON, lambda.StartingPosition.LATEST],
    default: lambda.StartingPosition.TRIM_HORIZON,
  },
  parallelizationFactor: { kind: 'integer', min: 1, max: 10, default: 1 },
  iteratorAgeAlarmThreshold: { ...DURATION, default: Duration.minutes(5) },
  enabled: { kind: 'boolean', default: true },
});

/** The alarms a StreamProcessor ships (docs/cdk.md says what each means and what to do). */
export interface StreamProcessorAlarms {
  /** The function falls behind its stream. */
  readonly iteratorAge: cloudwatch.Alarm;
  /** Lambda gave up on records and sent them to the on-failure destination. */
  readonly onFailureDeliveries: cloudwatch.Alarm;
  /** Lambda could not write to the on-failure destination: those records' positions are lost. */
  readonly destinationDeliveryFailures: cloudwatch.Alarm;
}

/** The `filters` option as Lambda's FilterCriteria, validated; undefined for no filter. */
function criteriaOf(filters: StreamProcessorProps['filters'], maxFilters: number | undefined) {
  if (filters === undefined) return undefined;
  const patterns = Array.isArray(filters)
    ? (filters as readonly FilterPattern[])
    : (filters as FilterCriteria).Filters.map(({ Pattern }) => JSON.parse(Pattern) as FilterPattern);
  if (patterns.length === 0) return undefined;
  return toFilterCriteria(patterns, maxFilters === undefined ? undefined : { maxFilters });
}

/** A function on a table's stream: the event source mapping, on-failure destination, metrics and alarms. */
export class StreamProcessor extends Construct {
  /** The function the stream feeds. */
  readonly function: lambda.IFunction;
  /** The event source mapping. */
  readonly mapping: lambda.EventSourceMapping;
  /** Where Lambda sends what it gave up on. */
  readonly onFailure: OnFailureTarget;
  /** The mapping's filter, as deployed; undefined when every record is delivered. */
  readonly filterCriteria: FilterCriteria | undefined;
  readonly alarms: StreamProcessorAlarms;

  constructor(scope: Construct, id: string, props: StreamProcessorProps) {
    super(scope, id);
    const o = readProps(props);
    const streamArn = o.table.tableStreamArn;
    if (streamArn === undefined)
      throw readProps.fail(
        "option 'table' has no stream: give the table a stream (NEW_AND_OLD_IMAGES)",
        'table',
      );
    this.filterCriteria = criteriaOf(o.filters, o.maxFilters);
    const fn = resolveFunction(this, 'Function', o.function, {
      where: 'StreamProcessor',
      key: 'function',
      timeout: Duration.seconds(60),
    });
    this.function = fn;
    this.onFailure = o.onFailure ?? secureQueue(this, 'OnFailureQueue', undefined);

    // The mapping polls with the function's role. DescribeStream, GetRecords and GetShardIterator
    // are authorized on the stream ARN; ListStreams has no resource type, so on this ARN it grants
    // nothing, and a mapping given the stream ARN never lists streams: it is not widened to `*`.
    const grants = new Grants(fn)
      .allow(
        [
          'dynamodb:DescribeStream',
          'dynamodb:GetRecords',
          'dynamodb:GetShardIterator',
          'dynamodb:ListStreams',
        ],
        [streamArn],
      )
      .key(o.table.encryptionKey, ['kms:Decrypt'], ['dynamodb']);

    this.mapping = new lambda.EventSourceMapping(this, 'Mapping', {
      target: fn,
      eventSourceArn: streamArn,
      startingPosition: o.startingPosition,
      batchSize: o.batchSize,
      maxBatchingWindow: o.maxBatchingWindow,
      reportBatchItemFailures: o.reportBatchItemFailures,
      bisectBatchOnError: o.bisectBatchOnError,
      retryAttempts: o.retryAttempts,
      maxRecordAge: o.maxRecordAge,
      parallelizationFactor: o.parallelizationFactor,
      enabled: o.enabled,
      onFailure: new OnFailureDestination(this.onFailure),
      filters: this.filterCriteria?.Filters.map(({ Pattern }) => ({ pattern: Pattern })),
      // PolledEventCount, FilteredOutEventCount, InvokedEventCount, FailedInvokeEventCount,
      // DroppedEventCount, OnFailureDestinationDeliveredEventCount, per mapping.
      metricsConfig: { metrics: [lambda.MetricType.EVENT_COUNT] },
    });
    // Lambda checks the role when it creates the mapping: the grants must exist first.
    grants.before(this.mapping);

    this.alarms = {
      iteratorAge: iteratorAgeAlarm(this, fn, o.iteratorAgeAlarmThreshold),
      onFailureDeliveries: onFailureDeliveriesAlarm(this, this.mapping.eventSourceMappingId),
      destinationDeliveryFailures: destinationDeliveryFailuresAlarm(this, fn),
    };
  }
}
