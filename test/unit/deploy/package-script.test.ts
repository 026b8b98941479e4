import { describe, expect, it } from 'vitest';
import { templateProblems } from '../../../scripts/package.js';

type Variables = Record<string, unknown>;
interface Parts {
  aggregator?: Variables;
  archive?: Variables;
  compaction?: Variables;
  rate?: string;
  compactRate?: string;
  lifecycle?: {
    glacier?: unknown;
    deepArchive?: unknown;
    noncurrentGlacier?: unknown;
    noncurrentExpire?: unknown;
  };
}

const goodAggregator = {
  TABLE_NAME: { Ref: 'RecordsTable' },
  POLL: 'final-2026',
  SHARDS: 10,
  REGISTRY_PARTITIONS: 4,
};
const goodArchive = {
  ARCHIVE_BUCKET: { Ref: 'ArchiveBucket' },
  ARCHIVE_PREFIX: 'archive/',
  DEAD_LETTER_OVERFLOW_PREFIX: 'dead-letter/',
};

const goodCompaction = {
  ARCHIVE_BUCKET: { Ref: 'ArchiveBucket' },
  ARCHIVE_PREFIX: 'archive/',
  TABLE_NAME: { Ref: 'RecordsTable' },
  STORAGE_CLASS: 'STANDARD',
  COMPACT_AFTER_SECONDS: 90000,
  COMPACT_LOOKBACK_HOURS: 48,
};

/** The parts of a packaged template that templateProblems reads, shaped as serverless writes them. */
function template(parts: Parts = {}) {
  const days = {
    glacier: 30,
    deepArchive: 180,
    noncurrentGlacier: 30,
    noncurrentExpire: 365,
    ...parts.lifecycle,
  };
  return {
    Resources: {
      AggregateVotesLambdaFunction: {
        Properties: { Environment: { Variables: { ...goodAggregator, ...parts.aggregator } } },
      },
      AggregateVotesEventsRuleSchedule1: {
        Type: 'AWS::Events::Rule',
        Properties: { ScheduleExpression: parts.rate ?? 'rate(1 minute)' },
      },
      ArchiveTtlLambdaFunction: {
        Properties: { Environment: { Variables: { ...goodArchive, ...parts.archive } } },
      },
      ArchiveTtlEventSourceMappingDynamodbRecordsTable: {
        Type: 'AWS::Lambda::EventSourceMapping',
        Properties: { MaximumRecordAgeInSeconds: 86400 },
      },
      CompactArchiveLambdaFunction: {
        Properties: { Environment: { Variables: { ...goodCompaction, ...parts.compaction } } },
      },
      CompactArchiveEventsRuleSchedule1: {
        Type: 'AWS::Events::Rule',
        Properties: { ScheduleExpression: parts.compactRate ?? 'rate(1 hour)' },
      },
      ArchiveBucket: {
        Properties: {
          LifecycleConfiguration: {
            Rules: [
              {
                Id: 'archive-to-glacier',
                Transitions: [
                  { StorageClass: 'GLACIER', TransitionInDays: days.glacier },
                  { StorageClass: 'DEEP_ARCHIVE', TransitionInDays: days.deepArchive },
                ],
                NoncurrentVersionTransitions: [
                  { StorageClass: 'GLACIER', TransitionInDays: days.noncurrentGlacier },
                ],
                NoncurrentVersionExpiration: { NoncurrentDays: days.noncurrentExpire },
              },
              { Id: 'abort-incomplete-uploads' },
            ],
          },
        },
      },
    },
  };
}

describe('npm run package: settings checks on the packaged template', () => {
  it('accepts the defaults, a poll id of letters, digits, `.`, `_`, `-` and positive layout numbers', () => {
    expect(templateProblems(template())).toEqual([]);
    expect(templateProblems(template({ aggregator: { SHARDS: '25' } }))).toEqual([]);
  });

  it("refuses a parameter's Default outside its AllowedValues or AllowedPattern, naming the setting", () => {
    const withParameters = (kmsKeyArn: string, archiveSource: string) => ({
      ...template(),
      // As infra/parameters.yml declares them.
      Parameters: {
        KmsKeyArn: {
          Type: 'String',
          Default: kmsKeyArn,
          AllowedPattern: '^(arn:aws[a-zA-Z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[a-zA-Z0-9-]+)?$',
          ConstraintDescription: 'empty, or a KMS key ARN',
        },
        ArchiveSource: {
          Type: 'String',
          Default: archiveSource,
          AllowedValues: ['dynamodb-stream', 'kinesis'],
        },
      },
    });
    const key = 'arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000';
    expect(templateProblems(withParameters('', 'dynamodb-stream'))).toEqual([]);
    expect(templateProblems(withParameters(key, 'kinesis'))).toEqual([]);
    expect(templateProblems(withParameters(key, 'kinesiss'))).toEqual([
      'archiveSource (TIDEWATER_ARCHIVE_SOURCE) is "kinesiss"; it must be one of "dynamodb-stream", "kinesis"',
    ]);
    // An alias cannot be named in an IAM grant.
    expect(templateProblems(withParameters('alias/archive', 'kinesis'))).toEqual([
      'kmsKeyArn (TIDEWATER_KMS_KEY_ARN) is "alias/archive"; it must be empty, or a KMS key ARN',
    ]);
  });

  it('refuses a poll id with an IAM wildcard or a key separator', () => {
    for (const poll of ['*', 'final?', 'a#b', '']) {
      const problems: string[] = templateProblems(template({ aggregator: { POLL: poll } }));
      expect(problems, poll).toHaveLength(1);
      expect(problems[0]).toMatch(/TIDEWATER_POLL/);
    }
  });

  it('refuses a missing or non-positive layout', () => {
    expect(templateProblems(template({ aggregator: { SHARDS: undefined } }))).toEqual([
      expect.stringMatching(/^SHARDS/),
    ]);
    expect(templateProblems(template({ aggregator: { REGISTRY_PARTITIONS: 0 } }))).toEqual([
      expect.stringMatching(/^REGISTRY_PARTITIONS/),
    ]);
    expect(templateProblems({ Resources: {} })).toEqual([
      'AggregateVotesLambdaFunction has no environment',
      'ArchiveTtlLambdaFunction has no environment',
      'CompactArchiveLambdaFunction has no environment',
    ]);
  });

  it('accepts rate() in EventBridge grammar and refuses the rest before a deploy does', () => {
    for (const rate of [
      'rate(1 minute)',
      'rate(5 minutes)',
      'rate(1 hour)',
      'rate(12 hours)',
      'rate(2 days)',
    ]) {
      expect(templateProblems(template({ rate })), rate).toEqual([]);
    }
    for (const rate of ['rate(1 minutes)', 'rate(5 minute)', 'rate(0 minutes)', 'rate(1 min)', 'rate()']) {
      expect(templateProblems(template({ rate })), rate).toEqual([expect.stringMatching(/^aggregateRate/)]);
    }
  });

  it('accepts key prefixes of one or more segments, each ending in `/`', () => {
    for (const prefix of ['archive/', 'ttl/v1/', 'env=prod/archive/']) {
      expect(templateProblems(template({ archive: { ARCHIVE_PREFIX: prefix } })), prefix).toEqual([]);
    }
    expect(templateProblems(template({ archive: { DEAD_LETTER_OVERFLOW_PREFIX: 'poison/' } }))).toEqual([]);
  });

  it('refuses an empty archivePrefix: its lifecycle rule would take the dead letters to Glacier', () => {
    // The lifecycle rule's Prefix '' is the whole bucket, dead-letter/ included, and the archive
    // grant would be PutObject on <bucket>/*.
    const problems: string[] = templateProblems(template({ archive: { ARCHIVE_PREFIX: '' } }));
    expect(problems).toEqual([
      expect.stringMatching(/^archivePrefix is ""; .*<bucket>\/<prefix>\*.*whole bucket/),
      expect.stringMatching(/^deadLetterPrefix "dead-letter\/" is inside archivePrefix ""/),
    ]);
    expect(problems[1]).toMatch(/empty prefix is the whole bucket/);
    expect(problems[1]).toMatch(/Glacier/);
  });

  it('refuses an empty deadLetterPrefix: the overflow grant would be PutObject on <bucket>/*', () => {
    // ...and its expiry rule's Prefix '' would expire the archives too.
    expect(templateProblems(template({ archive: { DEAD_LETTER_OVERFLOW_PREFIX: '' } }))).toEqual([
      expect.stringMatching(/^deadLetterPrefix is ""; .*whole bucket/),
      expect.stringMatching(
        /^archivePrefix "archive\/" is inside deadLetterPrefix "" \(an empty prefix is the whole bucket\); .*expire archives/,
      ),
    ]);
  });

  it('refuses a key prefix that would widen or miss the IAM resource <bucket>/<prefix>*', () => {
    // `*` / `?` are IAM wildcards; `/archive/` grants a key the sinks never write (they strip the
    // leading `/`); `archive` grants `archive-other/...` too; a missing variable grants nothing.
    for (const prefix of ['*', 'arch?ve/', '/archive/', 'archive', 'a//b/', undefined]) {
      const problems: string[] = templateProblems(template({ archive: { ARCHIVE_PREFIX: prefix } }));
      expect(problems, String(prefix)).toEqual([expect.stringMatching(/^archivePrefix is /)]);
    }
    for (const prefix of ['*', 'dead?letter/', '/dead-letter/', 'dead-letter', undefined]) {
      const problems: string[] = templateProblems(
        template({ archive: { DEAD_LETTER_OVERFLOW_PREFIX: prefix } }),
      );
      expect(problems, String(prefix)).toEqual([expect.stringMatching(/^deadLetterPrefix is /)]);
    }
  });

  it('refuses dead letters under the archive prefix, where the lifecycle would move them to Glacier', () => {
    expect(
      templateProblems(template({ archive: { DEAD_LETTER_OVERFLOW_PREFIX: 'archive/dead-letter/' } })),
    ).toEqual([expect.stringMatching(/inside archivePrefix/)]);
    // The lifecycle rule's Prefix is a plain string prefix, so `archive` would take `archive-dl/` too.
    expect(
      templateProblems(
        template({ archive: { ARCHIVE_PREFIX: 'archive', DEAD_LETTER_OVERFLOW_PREFIX: 'archive-dl/' } }),
      ),
    ).toEqual([expect.stringMatching(/^archivePrefix is /), expect.stringMatching(/inside archivePrefix/)]);
  });

  it('refuses archives under the dead-letter prefix, where the dead-letter expiry would delete them', () => {
    expect(templateProblems(template({ archive: { ARCHIVE_PREFIX: 'dead-letter/archive/' } }))).toEqual([
      'archivePrefix "dead-letter/archive/" is inside deadLetterPrefix "dead-letter/"; the dead-letter lifecycle would expire archives with the dead letters',
    ]);
  });

  it("refuses a deadLetterAfterAgeSeconds at or past the mapping's maximumRecordAgeInSeconds", () => {
    // A record Lambda gives up on first would reach the on-failure queue without its content.
    expect(templateProblems(template({ archive: { MAX_RECORD_AGE_SECONDS: '82800' } }))).toEqual([]);
    expect(templateProblems(template({ archive: { MAX_RECORD_AGE_SECONDS: 86400 } }))).toEqual([
      expect.stringMatching(
        /^deadLetterAfterAgeSeconds 86400 must be a whole number of seconds below the stream mapping's maximumRecordAgeInSeconds \(86400\)/,
      ),
    ]);
  });

  it('refuses lifecycle days S3 would reject', () => {
    expect(templateProblems(template({ lifecycle: { glacier: 180, deepArchive: 180 } }))).toEqual([
      expect.stringMatching(/^glacierAfterDays 180 and deepArchiveAfterDays 180/),
    ]);
    expect(templateProblems(template({ lifecycle: { glacier: 30, deepArchive: '180' } }))).toHaveLength(1);
    expect(
      templateProblems(template({ lifecycle: { noncurrentGlacier: 30, noncurrentExpire: 30 } })),
    ).toEqual([expect.stringMatching(/^noncurrentExpireAfterDays 30/)]);
  });

  it('names the schedule a bad rate belongs to', () => {
    expect(templateProblems(template({ compactRate: 'rate(1 hours)' }))).toEqual([
      expect.stringMatching(/^compactRate \(TIDEWATER_COMPACT_RATE\) gives "rate\(1 hours\)"/),
    ]);
  });

  it('refuses compaction timing that would meet objects already in GLACIER, or hours still open', () => {
    // 25 h + 48 h after an hour starts (plus the hour) is day 4: far from day 30.
    expect(templateProblems(template({ lifecycle: { glacier: 4, deepArchive: 180 } }))).toEqual([
      expect.stringMatching(
        /^compactAfterSeconds \(90000\) \+ compactLookbackHours \(48\) reach 74 hours .* glacierAfterDays \(4\)/,
      ),
    ]);
    expect(templateProblems(template({ lifecycle: { glacier: 5, deepArchive: 180 } }))).toEqual([]);
    expect(templateProblems(template({ compaction: { COMPACT_LOOKBACK_HOURS: 24 * 40 } }))).toEqual([
      expect.stringMatching(/within a day of glacierAfterDays \(30\)/),
    ]);
    expect(templateProblems(template({ compaction: { COMPACT_AFTER_SECONDS: 3600 } }))).toEqual([
      expect.stringMatching(/below the stream mapping's maximumRecordAgeInSeconds \(86400\)/),
    ]);
    expect(templateProblems(template({ compaction: { COMPACT_AFTER_SECONDS: 'soon' } }))).toEqual([
      expect.stringMatching(/^compactAfterSeconds "soon" must be a whole number of seconds/),
    ]);
  });

  it('refuses a storage class compaction cannot read', () => {
    for (const storageClass of ['GLACIER', 'DEEP_ARCHIVE']) {
      expect(
        templateProblems(template({ compaction: { STORAGE_CLASS: storageClass } })),
        storageClass,
      ).toEqual([expect.stringMatching(new RegExp(`^storageClass ${storageClass}: compaction cannot read`))]);
    }
    for (const storageClass of ['STANDARD', 'STANDARD_IA', 'GLACIER_IR']) {
      expect(
        templateProblems(template({ compaction: { STORAGE_CLASS: storageClass } })),
        storageClass,
      ).toEqual([]);
    }
  });
});
