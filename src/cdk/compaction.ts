// The archive's compaction on a schedule (src/handlers/compact-archive.ts, docs/archive.md): every
// `rate`, the closed hours of the last `lookbackHours` are rewritten into duplicate-free objects,
// large enough for the lifecycle to move to Glacier. Its role lists, reads, writes and deletes
// only under the archive prefix, never the dead letters.

import type * as events from 'aws-cdk-lib/aws-events';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Duration } from 'aws-cdk-lib/core';
import { Construct } from 'constructs';
import { DEFAULT_CLOSED_AFTER_SECONDS } from '../archive/hours.js';
import { defineOptions } from '../core/options.js';
import { type FunctionSource, resolveFunction, setEnvironment } from './function.js';
import { Grants } from './grants.js';
import { scheduleFunction } from './schedule.js';

/** TtlArchive's `compaction` option: the function, schedule and hours it compacts. */
export interface ArchiveCompactionProps {
  /** The compaction handler: your own on `compactRecentHours` (`tidewater/archive`), bundled. */
  readonly function: FunctionSource;
  /** How often compaction runs (whole minutes). Default 1 hour. */
  readonly rate?: Duration;
  /**
   * An hour is closed, and compacted, this long after its end: at least the mapping's maxRecordAge,
   * after which Lambda no longer redelivers into it. Default 25 hours.
   */
  readonly closedAfter?: Duration;
  /** Each run covers this many of the most recent closed hours, 1 to 336. Default 48. */
  readonly lookbackHours?: number;
}

const DURATION = { kind: 'object', methods: ['toSeconds'], expected: 'a Duration' } as const;

export const readCompactionProps = /* @__PURE__ */ defineOptions<ArchiveCompactionProps>()('TtlArchive', {
  function: { kind: 'object', required: true },
  rate: { ...DURATION, default: Duration.hours(1) },
  closedAfter: { ...DURATION, default: Duration.seconds(DEFAULT_CLOSED_AFTER_SECONDS) },
  lookbackHours: { kind: 'integer', min: 1, max: 24 * 14, default: 48 },
});

/** What the compaction needs of its archive. */
export interface CompactedArchive {
  readonly bucket: s3.IBucket;
  readonly prefix: string;
  readonly routes: string;
  readonly storageClass: string;
  readonly tableName: string;
}

export class ArchiveCompaction extends Construct {
  readonly function: lambda.IFunction;
  readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: ArchiveCompactionProps, archive: CompactedArchive) {
    super(scope, id);
    const o = readCompactionProps(props, 'TtlArchive', 'compaction.');
    const fn = resolveFunction(this, 'Function', o.function, {
      where: 'TtlArchive',
      key: 'compaction.function',
      timeout: Duration.minutes(5),
    });
    this.function = fn;
    setEnvironment(fn, {
      ARCHIVE_BUCKET: archive.bucket.bucketName,
      ARCHIVE_PREFIX: archive.prefix,
      ARCHIVE_ROUTES: archive.routes,
      TABLE_NAME: archive.tableName,
      STORAGE_CLASS: archive.storageClass,
      COMPACT_AFTER_SECONDS: String(o.closedAfter.toSeconds()),
      COMPACT_LOOKBACK_HOURS: String(o.lookbackHours),
    });
    // ListObjectsV2 is authorized on the bucket; the condition holds it to the archive prefix.
    // DeleteObjectVersion: compaction deletes the version it read, so a newer write survives.
    const grants = new Grants(fn)
      .allow(['s3:ListBucket'], [archive.bucket.bucketArn], {
        StringLike: { 's3:prefix': [`${archive.prefix}*`] },
      })
      .objects(archive.bucket, archive.prefix, [
        's3:GetObject',
        's3:PutObject',
        's3:DeleteObject',
        's3:DeleteObjectVersion',
      ])
      .key(archive.bucket.encryptionKey, ['kms:GenerateDataKey', 'kms:Decrypt'], ['s3']);
    this.rule = scheduleFunction(this, 'Schedule', fn, o.rate);
    grants.before(this.rule);
  }
}
