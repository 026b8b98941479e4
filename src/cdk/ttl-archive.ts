// The TTL archive as tidewater's serverless service deploys it (serverless.yml, infra/): the
// archive bucket, the archive function on the table's stream filtered to TTL deletes (user deletes
// too with `all-deletes`, every change with `every-change`), the dead-letter and on-failure queues, compaction on a schedule, and
// the alarms. The settings and their rules are infra/settings.yml's (docs/deploy.md).

import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Duration } from 'aws-cdk-lib/core';
import { Construct } from 'constructs';
import { ARCHIVE_STORAGE_CLASSES, type ArchiveStorageClass } from '../archive/format.js';
import { defineOptions } from '../core/options.js';
import { everyChange, ttlDeletes, userDeletes } from '../filters/ready-made.js';
import type { FilterPattern } from '../filters/types.js';
import { type ArchiveSettingNames, archiveRuleProblems } from '../handlers/archive-rules.js';
import { ARCHIVE_ROUTES, type ArchiveRoutes, changeLogPrefix } from '../handlers/archive-settings.js';
import { isKeyPrefix, KEY_PREFIX_RULE } from '../handlers/key-prefix.js';
import { queueDepthAlarm } from './alarms.js';
import { archiveBucket } from './archive-bucket.js';
import { ArchiveQueryTables, type ArchiveQueryTablesProps } from './archive-query-tables.js';
import { ArchiveCompaction, type ArchiveCompactionProps, readCompactionProps } from './compaction.js';
import { type FunctionSource, setEnvironment } from './function.js';
import { Grants } from './grants.js';
import { secureQueue } from './queue.js';
import {
  DEFAULT_MAX_RECORD_AGE,
  StreamProcessor,
  type StreamProcessorAlarms,
  type StreamProcessorProps,
} from './stream-processor.js';

/** The archive mapping's settings: a StreamProcessor's, less what the archive decides itself. */
export type ArchiveStreamSettings = Omit<
  StreamProcessorProps,
  'table' | 'function' | 'filters' | 'onFailure'
>;

/** Options of TtlArchive: the table, function, bucket layout, lifecycle and compaction. */
export interface TtlArchiveProps {
  /** The table whose expired items are archived; it needs a NEW_AND_OLD_IMAGES (or OLD_IMAGE) stream. */
  readonly table: dynamodb.ITable;
  /**
   * The archive handler: your `createStreamHandler` archiving to an `S3ArchiveSink`, bundled (the
   * package ships no deployable handler); it reads the settings this construct sets as environment
   * variables: ARCHIVE_BUCKET, ARCHIVE_PREFIX, … (docs/cdk.md).
   */
  readonly function: FunctionSource;
  /** The attribute the table's TTL reads (epoch seconds). Default `expiresAt`. */
  readonly ttlAttribute?: string;
  /**
   * `ttl-deletes`: what TTL expires. `all-deletes`: user deletes too, under `<archivePrefix>user-deletes/`.
   * `every-change`: the TTL archive and a change log of every insert, modify and delete, under
   * `<archivePrefix>changes/` (docs/archive.md). Default `ttl-deletes`.
   */
  readonly routes?: ArchiveRoutes;
  /** Key prefix of archive objects and of the Glacier lifecycle rule. Default `archive/`. */
  readonly archivePrefix?: string;
  /** Key prefix of dead-letter entries too large for an SQS message; outside `archivePrefix`. Default `dead-letter/`. */
  readonly deadLetterPrefix?: string;
  /** Storage class of new archive objects. Default `STANDARD`. */
  readonly storageClass?: ArchiveStorageClass;
  /** A KMS key for the bucket (SSE-KMS, bucket key on) and both queues. Default: SSE-S3 and SQS-managed SSE. */
  readonly encryptionKey?: kms.IKey;
  /** The bucket's name. Default: CloudFormation picks a unique one. */
  readonly bucketName?: string;
  /** Keep overwritten archive versions (they move to Glacier and expire late). Default true. */
  readonly versioned?: boolean;
  /** Archive objects move to GLACIER this many days after they are written. Default 30. */
  readonly glacierAfterDays?: number;
  /** …then to DEEP_ARCHIVE. Default 180. */
  readonly deepArchiveAfterDays?: number;
  /** Overwritten versions are deleted after this many days. Default 365. */
  readonly noncurrentExpireAfterDays?: number;
  /** Dead-letter entries (whole item images) are deleted after this many days. Default 30. */
  readonly deadLetterExpireAfterDays?: number;
  /**
   * A record still failing at this age is dead-lettered with its content, before the mapping's
   * `maxRecordAge` would give it up and keep only its position. Default 23 hours.
   */
  readonly deadLetterAfterAge?: Duration;
  /** The archive mapping's settings (batch size, retries, record age, alarm threshold, …). */
  readonly stream?: ArchiveStreamSettings;
  /**
   * Compaction on a schedule. Without it the archive's small objects (under 128 KB) never move to
   * Glacier. Default: none.
   */
  readonly compaction?: ArchiveCompactionProps;
  /**
   * The archive's Athena tables (an ArchiveQueryTables over this bucket, table, prefix and routes:
   * user-delete tables with `all-deletes`, change-log tables over `<archivePrefix>changes/` with
   * `every-change`; docs/query.md): the Glue database's name, and optionally the formats.
   * Default: none.
   */
  readonly queryTables?: Pick<ArchiveQueryTablesProps, 'databaseName' | 'formats'>;
}

/** The stream filter of each `routes` setting, as infra/filter-patterns.cjs gives serverless.yml. */
const ROUTE_FILTERS: Readonly<Record<ArchiveRoutes, () => FilterPattern[]>> = {
  'ttl-deletes': () => [ttlDeletes()],
  'all-deletes': () => [ttlDeletes(), userDeletes()],
  'every-change': () => [everyChange()],
};

const readProps = /* @__PURE__ */ defineOptions<TtlArchiveProps>()('TtlArchive', {
  table: { kind: 'object', methods: ['grantStreamRead'], expected: 'a dynamodb.ITable', required: true },
  function: { kind: 'object', required: true },
  ttlAttribute: { kind: 'nonEmptyString', default: 'expiresAt' },
  routes: { kind: 'enum', values: ARCHIVE_ROUTES, default: 'ttl-deletes' },
  archivePrefix: { kind: 'string', default: 'archive/' },
  deadLetterPrefix: { kind: 'string', default: 'dead-letter/' },
  storageClass: { kind: 'enum', values: ARCHIVE_STORAGE_CLASSES, default: 'STANDARD' },
  encryptionKey: { kind: 'object', methods: ['grantEncryptDecrypt'], expected: 'a kms.IKey' },
  bucketName: { kind: 'nonEmptyString' },
  versioned: { kind: 'boolean', default: true },
  glacierAfterDays: { kind: 'integer', min: 1, default: 30 },
  deepArchiveAfterDays: { kind: 'integer', min: 1, default: 180 },
  noncurrentExpireAfterDays: { kind: 'integer', min: 1, default: 365 },
  deadLetterExpireAfterDays: { kind: 'integer', min: 1, default: 30 },
  deadLetterAfterAge: {
    kind: 'object',
    methods: ['toSeconds'],
    expected: 'a Duration',
    default: Duration.hours(23),
  },
  stream: { kind: 'object' },
  compaction: { kind: 'object' },
  queryTables: { kind: 'object' },
});

// How the archive rules (shared with `npm run package`) name TtlArchive's options; Durations in seconds.
const OPTION_NAMES: ArchiveSettingNames = {
  archivePrefix: "'archivePrefix'",
  deadLetterPrefix: "'deadLetterPrefix'",
  storageClass: "'storageClass'",
  glacierAfterDays: "'glacierAfterDays'",
  deepArchiveAfterDays: "'deepArchiveAfterDays'",
  noncurrentExpireAfterDays: "'noncurrentExpireAfterDays'",
  deadLetterAfterAge: "'deadLetterAfterAge' in seconds",
  maxRecordAge: "the mapping's 'stream.maxRecordAge' in seconds",
  closedAfter: "'compaction.closedAfter' in seconds",
  lookbackHours: "'compaction.lookbackHours'",
};

/** The alarms a TtlArchive ships: its stream processor's, and the dead-letter queue's depth. */
export interface TtlArchiveAlarms extends StreamProcessorAlarms {
  /** Poison records wait in the dead-letter queue, with their content. */
  readonly deadLetterDepth: cloudwatch.Alarm;
}

/** The TTL archive: bucket, archive function on the stream, dead-letter and on-failure queues, compaction, alarms. */
export class TtlArchive extends Construct {
  readonly bucket: s3.Bucket;
  /** Poison records, with their content (the handler's SqsDeadLetterSink). */
  readonly deadLetterQueue: sqs.Queue;
  /** The positions of batches Lambda gave up on (the mapping's on-failure destination). */
  readonly onFailureQueue: sqs.Queue;
  /** The archive function on the table's stream. */
  readonly processor: StreamProcessor;
  /** The scheduled compaction, when `compaction` is given. */
  readonly compaction: ArchiveCompaction | undefined;
  /** The archive's Athena tables, when `queryTables` is given. */
  readonly queryTables: ArchiveQueryTables | undefined;
  readonly alarms: TtlArchiveAlarms;

  constructor(scope: Construct, id: string, props: TtlArchiveProps) {
    super(scope, id);
    const o = readProps(props);
    const maxRecordAge = o.stream?.maxRecordAge ?? DEFAULT_MAX_RECORD_AGE;
    const compaction =
      o.compaction === undefined ? undefined : readCompactionProps(o.compaction, 'TtlArchive', 'compaction.');
    const problems = archiveRuleProblems(
      {
        archivePrefix: o.archivePrefix,
        deadLetterPrefix: o.deadLetterPrefix,
        lifecycle: {
          glacierAfterDays: o.glacierAfterDays,
          deepArchiveAfterDays: o.deepArchiveAfterDays,
          noncurrentGlacierAfterDays: o.glacierAfterDays,
          noncurrentExpireAfterDays: o.noncurrentExpireAfterDays,
        },
        deadLetterAfterAgeSeconds: o.deadLetterAfterAge.toSeconds(),
        maxRecordAgeSeconds: maxRecordAge.toSeconds(),
        compaction:
          compaction === undefined
            ? undefined
            : {
                storageClass: o.storageClass,
                closedAfterSeconds: compaction.closedAfter.toSeconds(),
                lookbackHours: compaction.lookbackHours,
              },
      },
      OPTION_NAMES,
    ).map((problem) => `option ${problem}`);
    if (problems.length > 0) throw readProps.fail(problems.join('; '));

    const key = o.encryptionKey;
    this.bucket = archiveBucket(this, 'Bucket', { ...o, encryptionKey: key });
    this.deadLetterQueue = secureQueue(this, 'DeadLetterQueue', key);
    this.onFailureQueue = secureQueue(this, 'OnFailureQueue', key);
    this.processor = new StreamProcessor(this, 'Processor', {
      ...o.stream,
      table: o.table,
      function: o.function,
      filters: ROUTE_FILTERS[o.routes](),
      onFailure: this.onFailureQueue,
    });
    const fn = this.processor.function;
    setEnvironment(fn, {
      ARCHIVE_BUCKET: this.bucket.bucketName,
      ARCHIVE_PREFIX: o.archivePrefix,
      STORAGE_CLASS: o.storageClass,
      TTL_ATTRIBUTE: o.ttlAttribute,
      ARCHIVE_ROUTES: o.routes,
      DEAD_LETTER_QUEUE_URL: this.deadLetterQueue.queueUrl,
      DEAD_LETTER_OVERFLOW_PREFIX: o.deadLetterPrefix,
      MAX_RECORD_AGE_SECONDS: String(o.deadLetterAfterAge.toSeconds()),
    });
    // PutObject covers conditional creates and checksummed uploads; the archive never reads,
    // lists or deletes. The dead-letter queue only: the on-failure queue is the mapping's.
    new Grants(fn)
      .objects(this.bucket, o.archivePrefix, ['s3:PutObject'])
      .objects(this.bucket, o.deadLetterPrefix, ['s3:PutObject'])
      .allow(['sqs:SendMessage'], [this.deadLetterQueue.queueArn])
      .key(key, ['kms:GenerateDataKey', 'kms:Decrypt'], ['s3', 'sqs']);

    this.compaction =
      o.compaction === undefined
        ? undefined
        : new ArchiveCompaction(this, 'Compaction', o.compaction, {
            bucket: this.bucket,
            prefix: o.archivePrefix,
            routes: o.routes,
            storageClass: o.storageClass,
            tableName: o.table.tableName,
          });
    this.queryTables =
      o.queryTables === undefined
        ? undefined
        : new ArchiveQueryTables(this, 'QueryTables', {
            ...o.queryTables,
            bucket: this.bucket,
            tables: [o.table.tableName],
            archivePrefix: o.archivePrefix,
            userDeletes: o.routes === 'all-deletes',
            // Where the handler writes the change log with every-change: its tables read it there.
            changeArchivePrefix: o.routes === 'every-change' ? changeLogPrefix(o.archivePrefix) : undefined,
          });
    this.alarms = {
      ...this.processor.alarms,
      deadLetterDepth: queueDepthAlarm(
        this,
        'DeadLetterDepthAlarm',
        this.deadLetterQueue,
        'records the archive could not process wait in the dead-letter queue, with their content',
      ),
    };
  }

  /**
   * Lets `fn` put objects under `prefix` of the archive bucket (a custom sink's own prefix, such as
   * `audit/`): `s3:PutObject` on `<bucket>/<prefix>*` and, with a KMS key, GenerateDataKey via S3.
   */
  grantPutObjects(fn: lambda.IFunction, prefix: string): void {
    if (!isKeyPrefix(prefix))
      throw readProps.fail(
        `grantPutObjects: the prefix must be ${KEY_PREFIX_RULE}, got ${JSON.stringify(prefix)}`,
      );
    new Grants(fn)
      .objects(this.bucket, prefix, ['s3:PutObject'])
      .key(this.bucket.encryptionKey, ['kms:GenerateDataKey'], ['s3']);
  }
}
