import { Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Duration } from 'aws-cdk-lib/core';
import { describe, expect, it } from 'vitest';
import { TtlArchive, type TtlArchiveProps } from '../../../src/cdk.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { toFilterCriteria } from '../../../src/filters/criteria.js';
import { everyChange, ttlDeletes, userDeletes } from '../../../src/filters/ready-made.js';
import { actionsOf, granting, iamStatements, inlineCode, newStack, streamTable } from './stack.js';

function archive(props: Partial<TtlArchiveProps> = {}, key?: boolean) {
  const stack = newStack();
  const encryptionKey = key ? new kms.Key(stack, 'Key') : undefined;
  const built = new TtlArchive(stack, 'Archive', {
    table: streamTable(stack),
    function: { code: inlineCode() },
    encryptionKey,
    ...props,
  });
  // Synthesized when first read: a test may add to the stack before.
  return {
    stack,
    built,
    get template() {
      return Template.fromStack(stack);
    },
  };
}

const bucketArn = { 'Fn::GetAtt': [expect.stringMatching(/^ArchiveBucket/), 'Arn'] };
const under = (prefix: string) => ({ 'Fn::Join': ['', [bucketArn, `/${prefix}*`]] });

describe('TtlArchive', () => {
  it('makes the bucket private, encrypted, TLS-only, versioned, retained, moving archives to Glacier', () => {
    const { template } = archive();
    template.resourceCountIs('AWS::S3::Bucket', 1);
    template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        VersioningConfiguration: { Status: 'Enabled' },
        LifecycleConfiguration: {
          TransitionDefaultMinimumObjectSize: 'all_storage_classes_128K',
          Rules: [
            Match.objectLike({
              Id: 'archive-to-glacier',
              Prefix: 'archive/',
              Transitions: [
                { StorageClass: 'GLACIER', TransitionInDays: 30 },
                { StorageClass: 'DEEP_ARCHIVE', TransitionInDays: 180 },
              ],
              NoncurrentVersionTransitions: [{ StorageClass: 'GLACIER', TransitionInDays: 30 }],
              NoncurrentVersionExpiration: { NoncurrentDays: 365 },
            }),
            Match.objectLike({ Id: 'dead-letter-expiry', Prefix: 'dead-letter/', ExpirationInDays: 30 }),
            Match.objectLike({
              Id: 'abort-incomplete-uploads',
              AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 },
            }),
          ],
        },
      },
    });
    // TLS-only: every request without TLS is denied, on the bucket and its objects.
    const [policy] = Object.values(template.findResources('AWS::S3::BucketPolicy'));
    expect(policy?.Properties.PolicyDocument.Statement).toEqual([
      {
        Effect: 'Deny',
        Principal: { AWS: '*' },
        Action: 's3:*',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        Resource: [bucketArn, { 'Fn::Join': ['', [bucketArn, '/*']] }],
      },
    ]);
  });

  it('uses the KMS key, with a bucket key, for the bucket and both queues when one is given', () => {
    const { template } = archive({}, true);
    const keyArn = { 'Fn::GetAtt': [Match.stringLikeRegexp('^Key'), 'Arn'] };
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          {
            BucketKeyEnabled: true,
            ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: keyArn },
          },
        ],
      },
    });
    expect(
      Object.keys(template.findResources('AWS::SQS::Queue', { Properties: { KmsMasterKeyId: keyArn } })),
    ).toHaveLength(2);
    // The archive function uses the key only through S3 and SQS, and the table's stream reader none.
    const [use] = iamStatements(template).filter(
      (s) => actionsOf(s).includes('kms:GenerateDataKey') && JSON.stringify(s).includes('s3.'),
    );
    expect(use?.Condition?.StringEquals?.['kms:ViaService']).toEqual([
      { 'Fn::Join': ['', ['s3.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
      { 'Fn::Join': ['', ['sqs.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
    ]);
  });

  it('filters the archive mapping to TTL deletes, to every delete with all-deletes, to every change with every-change', () => {
    for (const [routes, patterns] of [
      ['ttl-deletes', [ttlDeletes()]],
      ['all-deletes', [ttlDeletes(), userDeletes()]],
      ['every-change', [everyChange()]],
    ] as const) {
      const { template, built } = archive({ routes });
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FilterCriteria: toFilterCriteria(patterns),
        DestinationConfig: {
          OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('OnFailureQueue'), 'Arn'] } },
        },
      });
      expect(built.processor.filterCriteria).toEqual(toFilterCriteria(patterns));
      template.hasResourceProperties('AWS::Lambda::Function', {
        Environment: { Variables: Match.objectLike({ ARCHIVE_ROUTES: routes }) },
      });
    }
  });

  it("sets the archive handler's settings and grants it PutObject under its two prefixes, SendMessage to the dead letters", () => {
    const { template } = archive({
      archivePrefix: 'expired/',
      deadLetterPrefix: 'poison/',
      ttlAttribute: 'ttl',
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: {
          NODE_OPTIONS: '--enable-source-maps',
          ARCHIVE_BUCKET: { Ref: Match.stringLikeRegexp('^ArchiveBucket') },
          ARCHIVE_PREFIX: 'expired/',
          STORAGE_CLASS: 'STANDARD',
          TTL_ATTRIBUTE: 'ttl',
          ARCHIVE_ROUTES: 'ttl-deletes',
          DEAD_LETTER_QUEUE_URL: { Ref: Match.stringLikeRegexp('DeadLetterQueue') },
          DEAD_LETTER_OVERFLOW_PREFIX: 'poison/',
          MAX_RECORD_AGE_SECONDS: '82800',
        },
      },
    });
    expect(granting(template, 's3:PutObject').map((s) => s.Resource)).toEqual([
      under('expired/'),
      under('poison/'),
    ]);
    expect(granting(template, 'sqs:SendMessage').map((s) => s.Resource)).toEqual([
      { 'Fn::GetAtt': [expect.stringMatching(/OnFailureQueue/), 'Arn'] },
      { 'Fn::GetAtt': [expect.stringMatching(/DeadLetterQueue/), 'Arn'] },
    ]);
    // The archive never reads, lists or deletes.
    const s3Actions = new Set(
      iamStatements(template)
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('s3:')),
    );
    expect([...s3Actions]).toEqual(['s3:PutObject']);
  });

  it('schedules compaction with a role that lists, reads, rewrites and deletes under the archive prefix only', () => {
    const { template, built } = archive({
      compaction: { function: { code: inlineCode() }, lookbackHours: 24 },
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 hour)',
      State: 'ENABLED',
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'events.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('CompactionSchedule'), 'Arn'] },
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 300,
      Environment: {
        Variables: Match.objectLike({
          ARCHIVE_PREFIX: 'archive/',
          TABLE_NAME: { Ref: Match.stringLikeRegexp('^Table') },
          COMPACT_AFTER_SECONDS: '90000',
          COMPACT_LOOKBACK_HOURS: '24',
        }),
      },
    });
    expect(granting(template, 's3:ListBucket')).toEqual([
      expect.objectContaining({
        Resource: bucketArn,
        Condition: { StringLike: { 's3:prefix': ['archive/*'] } },
      }),
    ]);
    const [rewrite] = granting(template, 's3:DeleteObjectVersion');
    expect(rewrite?.Action).toEqual([
      's3:GetObject',
      's3:PutObject',
      's3:DeleteObject',
      's3:DeleteObjectVersion',
    ]);
    expect(rewrite?.Resource).toEqual(under('archive/'));
    expect(built.compaction?.rule).toBeDefined();
  });

  it('adds the dead-letter depth alarm to the processor’s three', () => {
    const { template, built } = archive();
    template.resourceCountIs('AWS::CloudWatch::Alarm', 4);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('DeadLetterQueue'), 'QueueName'] },
        },
      ],
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(Object.keys(built.alarms).sort()).toEqual([
      'deadLetterDepth',
      'destinationDeliveryFailures',
      'iteratorAge',
      'onFailureDeliveries',
    ]);
  });

  it('sets the settings on, and grants to, an existing lambda.Function given as the archive function', () => {
    const stack = newStack();
    const fn = new lambda.Function(stack, 'Mine', {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: inlineCode(),
    });
    const built = new TtlArchive(stack, 'Archive', { table: streamTable(stack), function: fn });
    expect(built.processor.function).toBe(fn);
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::Lambda::Function', 1);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ ARCHIVE_PREFIX: 'archive/', TTL_ATTRIBUTE: 'expiresAt' }),
      },
    });
    expect(granting(template, 's3:PutObject').map((s) => s.Resource)).toEqual([
      under('archive/'),
      under('dead-letter/'),
    ]);
  });

  it("grants a custom sink's function PutObject under its own prefix of the bucket", () => {
    const { stack, built } = archive();
    const fn = new lambda.Function(stack, 'Audit', {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: inlineCode(),
    });
    built.grantPutObjects(fn, 'audit/');
    expect(granting(Template.fromStack(stack), 's3:PutObject').map((s) => s.Resource)).toContainEqual(
      under('audit/'),
    );
    expect(() => built.grantPutObjects(fn, '')).toThrow(
      /grantPutObjects: the prefix must be one or more segments/,
    );
    expect(() => built.grantPutObjects(fn, 'a*/')).toThrow(InvalidOptionsError);
  });

  it('refuses settings that would widen a grant, lose data or fail the deploy, naming the option', () => {
    const compaction = { function: { code: inlineCode() } };
    const cases: [Partial<TtlArchiveProps>, RegExp][] = [
      [{ archivePrefix: '' }, /option 'archivePrefix' is ""; it must be one or more segments/],
      [
        { deadLetterPrefix: 'dl*/' },
        /option 'deadLetterPrefix' is "dl\*\/"; it must be one or more segments/,
      ],
      [
        { deadLetterPrefix: 'archive/dead/' },
        /option 'deadLetterPrefix' "archive\/dead\/" is inside 'archivePrefix' "archive\/"; the archive lifecycle would move dead letters to Glacier/,
      ],
      [
        { deepArchiveAfterDays: 30 },
        /option 'glacierAfterDays' 30 and 'deepArchiveAfterDays' 30 must be whole days with DEEP_ARCHIVE after GLACIER/,
      ],
      [
        { deadLetterAfterAge: Duration.days(2) },
        /option 'deadLetterAfterAge' in seconds 172800 must be a whole number of seconds below the mapping's 'stream.maxRecordAge' in seconds \(86400\)/,
      ],
      [
        { glacierAfterDays: 3, compaction },
        /'compaction.closedAfter' in seconds \(90000\) \+ 'compaction.lookbackHours' \(48\) reach 74 hours .* within a day of 'glacierAfterDays' \(3\)/,
      ],
      [{ storageClass: 'GLACIER', compaction }, /option 'storageClass' GLACIER: compaction cannot read/],
      [
        { archivePrefix: 'dead-letter/archive/' },
        /option 'archivePrefix' "dead-letter\/archive\/" is inside 'deadLetterPrefix' "dead-letter\/"; the dead-letter lifecycle would expire archives/,
      ],
      [
        // The compaction handler refuses a closedAfter below an hour at its cold start.
        {
          stream: { maxRecordAge: Duration.minutes(10) },
          compaction: { ...compaction, closedAfter: Duration.minutes(30) },
        },
        /option 'compaction.closedAfter' in seconds 1800 must be a whole number of seconds, at least 3600/,
      ],
      [
        { compaction: { ...compaction, closedAfter: Duration.hours(2) } },
        /'compaction.closedAfter' in seconds \(7200\) is below the mapping's 'stream.maxRecordAge' in seconds \(86400\)/,
      ],
      [
        { compaction: { ...compaction, lookbackhours: 2 } as never },
        /TtlArchive: unknown option 'compaction.lookbackhours'/,
      ],
      [{ routes: 'every-delete' as never }, /option 'routes' must be one of/],
    ];
    for (const [props, message] of cases) {
      expect(() => archive(props)).toThrow(InvalidOptionsError);
      expect(() => archive(props)).toThrow(message);
    }
  });
});
