// biome-ignore-all lint/suspicious/noExplicitAny: the generated CloudFormation template is untyped JSON
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zipEntries, zipEntryData } from '../../../scripts/package.js';
import { toFilterCriteria, ttlDeletes, userDeletes } from '../../../src/filters/index.js';
import { PollKeys } from '../../../src/votes/keys.js';
import {
  asList,
  conditionHolds,
  grants,
  resourcesOfType,
  roleStatement,
  roleStatements,
  statements,
  streamMapping,
  type Template,
  viaService,
} from './template.js';

// Runs the real `npm run package` (osls + serverless-esbuild) with no AWS credentials and
// checks the CloudFormation it writes: the settings that decide whether data is lost live there.

const root = path.resolve(import.meta.dirname, '../../..');

interface PackageRun {
  output: string;
  template: Template;
}

function runPackage(args: string[], env: Record<string, string> = {}): PackageRun {
  // The test runner's env carries dummy credentials for the local servers; packaging must not need any.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')),
  );
  const result = spawnSync(process.execPath, [path.join(root, 'scripts/package.js'), ...args], {
    cwd: root,
    env: { ...inherited, ...env },
    encoding: 'utf8',
    timeout: 240_000,
  });
  const output = `${result.stdout}\n${result.stderr}`;
  if (result.status !== 0)
    throw new Error(`npm run package failed (${result.status ?? result.signal}):\n${output}`);
  const dir = args.includes('--package')
    ? (args[args.indexOf('--package') + 1] as string)
    : path.join(root, '.serverless');
  const template = JSON.parse(
    readFileSync(path.join(dir, 'cloudformation-template-update-stack.json'), 'utf8'),
  ) as Template;
  return { output, template };
}

/** One entry of a zip, as text, through the zip reader `npm run package` sizes bundles with. */
function zippedText(file: string, name: string): string {
  const zip = readFileSync(file);
  const entry = zipEntries(zip).find((e) => e.name === name);
  if (entry === undefined) throw new Error(`${name} is not in ${file}`);
  return zipEntryData(zip, entry).toString('utf8');
}

function only(template: Template, type: string) {
  const found = resourcesOfType(template, type);
  expect(found, type).toHaveLength(1);
  return found[0]![1];
}

/** What every role may do with its own log group, and nothing else there. */
const writeLogs = (group: string) => ({
  Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
  Resource: [{ 'Fn::GetAtt': [group, 'Arn'] }],
  Condition: undefined,
});

let ttlOnly: PackageRun;
let allDeletes: PackageRun;
let allDeletesDir: string;

beforeAll(() => {
  ttlOnly = runPackage([]);
  allDeletesDir = mkdtempSync(path.join(tmpdir(), 'tidewater-package-'));
  allDeletes = runPackage(['--package', allDeletesDir, '--stage', 'prod'], {
    TIDEWATER_ARCHIVE_ROUTES: 'all-deletes',
    TIDEWATER_KMS_KEY_ARN: 'arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000',
  });
}, 300_000);

afterAll(() => {
  if (allDeletesDir) rmSync(allDeletesDir, { recursive: true, force: true });
});

describe('serverless package (offline)', () => {
  it('packages with osls without a single warning (its schema knows nodejs22.x)', () => {
    expect(ttlOnly.output).toContain('Service packaged');
    expect(ttlOnly.output).not.toMatch(/warning|deprecat|\bat '/i);
  });

  it('deploys nodejs22.x on arm64 with each function on its own role and a log retention', () => {
    const functions = resourcesOfType(ttlOnly.template, 'AWS::Lambda::Function');
    expect(functions.map(([id]) => id).sort()).toEqual([
      'AggregateVotesLambdaFunction',
      'ArchiveTtlLambdaFunction',
      'BackfillExportFileLambdaFunction',
      'CompactArchiveLambdaFunction',
    ]);
    for (const [, fn] of functions) {
      expect(fn.Properties.Runtime).toBe('nodejs22.x');
      expect(fn.Properties.Architectures).toEqual(['arm64']);
      expect(fn.Properties.Handler).toMatch(/^src\/handlers\/[a-z-]+\.handler$/);
    }
    expect(ttlOnly.template.Resources.ArchiveTtlLambdaFunction!.Properties.Role).toEqual({
      'Fn::GetAtt': ['ArchiveTtlRole', 'Arn'],
    });
    expect(ttlOnly.template.Resources.AggregateVotesLambdaFunction!.Properties.Role).toEqual({
      'Fn::GetAtt': ['AggregateVotesRole', 'Arn'],
    });
    expect(ttlOnly.template.Resources.CompactArchiveLambdaFunction!.Properties.Role).toEqual({
      'Fn::GetAtt': ['CompactArchiveRole', 'Arn'],
    });
    // No shared role: serverless only makes IamRoleLambdaExecution when a function lacks `role`.
    expect(ttlOnly.template.Resources.IamRoleLambdaExecution).toBeUndefined();
    for (const [, group] of resourcesOfType(ttlOnly.template, 'AWS::Logs::LogGroup')) {
      expect(group.Properties.RetentionInDays).toBe(30);
    }
  });

  it("sets the archive mapping's FilterCriteria to exactly what src/filters produces", () => {
    const mapping = streamMapping(ttlOnly.template);
    expect(mapping.Properties.FilterCriteria).toEqual(toFilterCriteria([ttlDeletes()]));
    const routed = streamMapping(allDeletes.template);
    expect(routed.Properties.FilterCriteria).toEqual(toFilterCriteria([ttlDeletes(), userDeletes()]));
    const env = allDeletes.template.Resources.ArchiveTtlLambdaFunction!.Properties.Environment.Variables;
    expect(env.ARCHIVE_ROUTES).toBe('all-deletes');
  });

  it('reports partial batch failures, bisects, bounds retries and age, and sends failures to SQS', () => {
    const { Properties: p } = streamMapping(ttlOnly.template);
    expect(p.EventSourceArn).toEqual({ 'Fn::GetAtt': ['RecordsTable', 'StreamArn'] });
    expect(p.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(p.BisectBatchOnFunctionError).toBe(true);
    expect(p.MaximumRetryAttempts).toBe(5);
    expect(p.MaximumRecordAgeInSeconds).toBe(86400);
    expect(p.StartingPosition).toBe('TRIM_HORIZON');
    expect(p.BatchSize).toBe(100);
    expect(p.MaximumBatchingWindowInSeconds).toBe(5);
    expect(p.DestinationConfig).toEqual({
      OnFailure: { Destination: { 'Fn::GetAtt': ['OnFailureQueue', 'Arn'] } },
    });
    const env = ttlOnly.template.Resources.ArchiveTtlLambdaFunction!.Properties.Environment.Variables;
    expect(env).toMatchObject({
      ARCHIVE_BUCKET: { Ref: 'ArchiveBucket' },
      ARCHIVE_PREFIX: 'archive/',
      TTL_ATTRIBUTE: 'expiresAt',
      ARCHIVE_ROUTES: 'ttl-deletes',
      DEAD_LETTER_QUEUE_URL: { Ref: 'DeadLetterQueue' },
      // Where dead letters too large for SQS go; the role may write there (see below).
      DEAD_LETTER_OVERFLOW_PREFIX: 'dead-letter/',
    });
    // The handler dead-letters a still-failing record (with its content) before Lambda gives up on it.
    expect(Number(env.MAX_RECORD_AGE_SECONDS)).toBeLessThan(p.MaximumRecordAgeInSeconds);
  });

  it('ships observability: event-count metrics on the mapping, alarms on iterator age, on-failure deliveries and failures, dead-letter depth', () => {
    expect(streamMapping(ttlOnly.template).Properties.MetricsConfig).toEqual({
      Metrics: ['EventCount'],
    });
    const alarms = Object.fromEntries(resourcesOfType(ttlOnly.template, 'AWS::CloudWatch::Alarm'));
    const watched = (id: string) => {
      const p = alarms[id]?.Properties ?? {};
      return [p.Namespace, p.MetricName, p.Dimensions, p.ComparisonOperator];
    };
    expect(Object.keys(alarms).sort()).toEqual([
      'ArchiveTtlDestinationDeliveryFailuresAlarm',
      'ArchiveTtlIteratorAgeAlarm',
      'DeadLetterDepthAlarm',
      'OnFailureDeliveriesAlarm',
    ]);
    expect(watched('ArchiveTtlIteratorAgeAlarm')).toEqual([
      'AWS/Lambda',
      'IteratorAge',
      [{ Name: 'FunctionName', Value: { Ref: 'ArchiveTtlLambdaFunction' } }],
      'GreaterThanThreshold',
    ]);
    // A failed batch whose position could not be delivered is lost outright: one is already too many.
    expect(watched('ArchiveTtlDestinationDeliveryFailuresAlarm')).toEqual([
      'AWS/Lambda',
      'DestinationDeliveryFailures',
      [{ Name: 'FunctionName', Value: { Ref: 'ArchiveTtlLambdaFunction' } }],
      'GreaterThanThreshold',
    ]);
    expect(alarms.ArchiveTtlDestinationDeliveryFailuresAlarm?.Properties.Threshold).toBe(0);
    for (const [id, queue] of [
      ['OnFailureDeliveriesAlarm', 'OnFailureQueue'],
      ['DeadLetterDepthAlarm', 'DeadLetterQueue'],
    ] as const) {
      expect(watched(id)).toEqual([
        'AWS/SQS',
        'ApproximateNumberOfMessagesVisible',
        [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queue, 'QueueName'] } }],
        'GreaterThanThreshold',
      ]);
      // One message is already a record Lambda gave up on, or a poison record.
      expect(alarms[id]?.Properties.Threshold).toBe(0);
    }
  });

  it('gives the table a NEW_AND_OLD_IMAGES stream, TTL, PITR and deletion protection', () => {
    const table = only(ttlOnly.template, 'AWS::DynamoDB::Table');
    expect(table.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      DeletionProtectionEnabled: true,
    });
  });

  it('makes the bucket private, encrypted, TLS-only, versioned, with the Glacier lifecycle', () => {
    const template = ttlOnly.template;
    const p = template.Resources.ArchiveBucket!.Properties;
    expect(p.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(p.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
    const sse = p.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault;
    expect(sse.SSEAlgorithm).toEqual({ 'Fn::If': ['ArchiveUsesKms', 'aws:kms', 'AES256'] });
    expect(p.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    // Objects under 128 KB never transition (S3's default, stated): compaction makes hours large enough.
    expect(p.LifecycleConfiguration.TransitionDefaultMinimumObjectSize).toBe('all_storage_classes_128K');
    const rule = p.LifecycleConfiguration.Rules.find((r: { Id: string }) => r.Id === 'archive-to-glacier');
    expect(rule).toMatchObject({
      Status: 'Enabled',
      Prefix: 'archive/',
      Transitions: [
        { StorageClass: 'GLACIER', TransitionInDays: 30 },
        { StorageClass: 'DEEP_ARCHIVE', TransitionInDays: 180 },
      ],
    });

    const policy = resourcesOfType(template, 'AWS::S3::BucketPolicy').find(
      ([, r]) => r.Properties.Bucket?.Ref === 'ArchiveBucket',
    );
    expect(policy).toBeDefined();
    const deny = policy![1].Properties.PolicyDocument.Statement.find((s: any) => s.Effect === 'Deny');
    expect(deny).toMatchObject({
      Principal: '*',
      Action: 's3:*',
      Condition: { Bool: { 'aws:SecureTransport': 'false' } },
    });
    expect(deny.Resource).toEqual([
      { 'Fn::GetAtt': ['ArchiveBucket', 'Arn'] },
      { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['ArchiveBucket', 'Arn'] }, '/*']] },
    ]);
  });

  it('switches bucket, queues and table to the KMS key when one is configured', () => {
    const kms = 'arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000';
    const conditions = allDeletes.template.Conditions ?? {};
    // A stack parameter whose Default is the setting (infra/parameters.yml), so cfn-lint sees
    // which branch each condition takes instead of linting an empty ARN in the branch not taken.
    expect(allDeletes.template.Parameters?.KmsKeyArn?.Default).toBe(kms);
    expect(ttlOnly.template.Parameters?.KmsKeyArn?.Default).toBe('');
    for (const name of ['ArchiveUsesKms', 'QueuesUseKms', 'TableUsesKms', 'IamUsesKms']) {
      expect(conditions[name]).toEqual({ 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'KmsKeyArn' }, ''] }] });
      expect(conditionHolds(allDeletes.template, name)).toBe(true);
    }
    expect(conditionHolds(ttlOnly.template, 'ArchiveUsesKms')).toBe(false);
    expect(roleStatement(ttlOnly.template, 'ArchiveTtlRole', 'UseArchiveKey')).toBeUndefined();
    expect(roleStatement(allDeletes.template, 'ArchiveTtlRole', 'UseArchiveKey')).toEqual({
      Sid: 'UseArchiveKey',
      Effect: 'Allow',
      Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
      Resource: [kms],
      Condition: {
        StringEquals: {
          'kms:ViaService': [viaService('s3'), viaService('sqs'), viaService('dynamodb')],
        },
      },
    });
    // The table is encrypted with the same key, and the aggregator reads and writes it.
    expect(roleStatement(ttlOnly.template, 'AggregateVotesRole', 'UseTableKey')).toBeUndefined();
    expect(roleStatement(allDeletes.template, 'AggregateVotesRole', 'UseTableKey')).toEqual({
      Sid: 'UseTableKey',
      Effect: 'Allow',
      Action: [
        'kms:Decrypt',
        'kms:DescribeKey',
        'kms:Encrypt',
        'kms:GenerateDataKey',
        'kms:GenerateDataKeyWithoutPlaintext',
      ],
      Resource: [kms],
      Condition: {
        StringEquals: {
          'kms:ViaService': viaService('dynamodb'),
        },
      },
    });
    const table = only(allDeletes.template, 'AWS::DynamoDB::Table');
    expect(table.Properties.SSESpecification).toEqual({
      'Fn::If': [
        'TableUsesKms',
        expect.objectContaining({ KMSMasterKeyId: { Ref: 'KmsKeyArn' } }),
        expect.anything(),
      ],
    });
  });

  it('encrypts both queues and lets only the archive role send to them', () => {
    const queues = resourcesOfType(ttlOnly.template, 'AWS::SQS::Queue');
    expect(queues.map(([id]) => id).sort()).toEqual(['DeadLetterQueue', 'OnFailureQueue']);
    for (const [, queue] of queues) {
      expect(queue.Properties.SqsManagedSseEnabled).toEqual({
        'Fn::If': ['QueuesUseSqsSse', true, { Ref: 'AWS::NoValue' }],
      });
      expect(queue.Properties.KmsMasterKeyId).toEqual({
        'Fn::If': ['QueuesUseKms', { Ref: 'KmsKeyArn' }, { Ref: 'AWS::NoValue' }],
      });
      // Failed records' positions and images outlive the stack (they expire after 14 days).
      expect([queue.DeletionPolicy, queue.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
    }
    // Exactly one of the two encryption settings applies, whichever way the condition goes.
    expect(ttlOnly.template.Conditions?.QueuesUseSqsSse).toEqual({
      'Fn::Equals': [{ Ref: 'KmsKeyArn' }, ''],
    });
    expect(conditionHolds(ttlOnly.template, 'QueuesUseSqsSse')).toBe(true);
    expect(conditionHolds(allDeletes.template, 'QueuesUseSqsSse')).toBe(false);
  });

  it('has no IAM statement with a `*` action or a `*` resource', () => {
    for (const run of [ttlOnly, allDeletes]) {
      const roles = resourcesOfType(run.template, 'AWS::IAM::Role');
      expect(roles.map(([id]) => id).sort()).toEqual([
        'AggregateVotesRole',
        'ArchiveTtlRole',
        'BackfillExportFileRole',
        'BackfillStateMachineRole',
        'CompactArchiveRole',
      ]);
      for (const [id, role] of roles) {
        for (const policy of role.Properties.Policies) {
          for (const statement of statements(run.template, policy.PolicyDocument)) {
            expect(statement.Effect, id).toBe('Allow');
            expect(statement.NotAction, id).toBeUndefined();
            expect(statement.NotResource, id).toBeUndefined();
            for (const action of asList(statement.Action)) {
              expect(typeof action, `${id} ${statement.Sid}`).toBe('string');
              expect(action as string, `${id} ${statement.Sid}`).not.toContain('*');
            }
            for (const resource of asList(statement.Resource)) {
              expect(resource, `${id} ${statement.Sid}`).not.toBe('*');
              if (typeof resource === 'string') expect(resource, `${id} ${statement.Sid}`).toMatch(/^arn:/);
            }
          }
        }
      }
    }
  });

  it('limits the archive role to its stream, its prefixes, its queues and its logs', () => {
    const granted = roleStatements(ttlOnly.template, 'ArchiveTtlRole');
    expect(
      Object.fromEntries(granted.map((s) => [s.Sid, { Action: s.Action, Resource: s.Resource }])),
    ).toEqual({
      WriteLogs: {
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: [{ 'Fn::GetAtt': ['ArchiveTtlLogGroup', 'Arn'] }],
      },
      ReadTableStream: {
        Action: [
          'dynamodb:DescribeStream',
          'dynamodb:GetRecords',
          'dynamodb:GetShardIterator',
          'dynamodb:ListStreams',
        ],
        Resource: [{ 'Fn::GetAtt': ['RecordsTable', 'StreamArn'] }],
      },
      PutArchiveObjects: {
        Action: ['s3:PutObject'],
        Resource: [{ 'Fn::Join': ['', [{ 'Fn::GetAtt': ['ArchiveBucket', 'Arn'] }, '/archive/*']] }],
      },
      PutDeadLetterOverflow: {
        Action: ['s3:PutObject'],
        Resource: [{ 'Fn::Join': ['', [{ 'Fn::GetAtt': ['ArchiveBucket', 'Arn'] }, '/dead-letter/*']] }],
      },
      SendFailures: {
        Action: ['sqs:SendMessage'],
        Resource: [{ 'Fn::GetAtt': ['DeadLetterQueue', 'Arn'] }, { 'Fn::GetAtt': ['OnFailureQueue', 'Arn'] }],
      },
    });
  });

  it("limits the aggregator role to reading the poll's counters and updating its totals", () => {
    const granted = roleStatements(ttlOnly.template, 'AggregateVotesRole');
    expect(grants(ttlOnly.template, 'AggregateVotesRole')).toEqual({
      WriteLogs: writeLogs('AggregateVotesLogGroup'),
      // The layout item, the registry, the shards and the totals (BatchGetItem reads those back);
      // not the voter markers (POLL#default#VOTER#...), and no other poll.
      ReadVoteItems: {
        Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'],
        Resource: [{ 'Fn::GetAtt': ['RecordsTable', 'Arn'] }],
        Condition: {
          'ForAllValues:StringLike': {
            'dynamodb:LeadingKeys': [
              'POLL#default#CONFIG',
              'POLL#default#REGISTRY#*',
              'POLL#default#VOTE#*',
              'POLL#default#TOTALS#*',
            ],
          },
        },
      },
      UpdateVoteTotals: {
        Action: ['dynamodb:UpdateItem'],
        Resource: [{ 'Fn::GetAtt': ['RecordsTable', 'Arn'] }],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['POLL#default#TOTALS#*'] } },
      },
    });

    // The patterns against the keys src/votes really uses, with IAM StringLike's wildcards.
    const like = (patterns: string[]) => {
      const regexes = patterns.map(
        (p) =>
          new RegExp(
            `^${p
              .replace(/[.+^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '.*')
              .replace(/\?/g, '.')}$`,
          ),
      );
      return (pk: string) => regexes.some((r) => r.test(pk));
    };
    const byCondition = (sid: string) =>
      like(granted.find((s) => s.Sid === sid)!.Condition['ForAllValues:StringLike']['dynamodb:LeadingKeys']);
    const [readable, updatable] = [byCondition('ReadVoteItems'), byCondition('UpdateVoteTotals')];
    const keys = new PollKeys('default', 4);
    const contestant = 'team#1*';
    const read = [
      keys.config(),
      keys.registry(contestant),
      keys.shard(contestant, 7),
      keys.total(contestant),
    ];
    for (const key of read) expect(readable(key.pk.S), key.pk.S).toBe(true);
    expect(updatable(keys.total(contestant).pk.S)).toBe(true);
    for (const key of [keys.shard(contestant, 0), keys.registry(contestant), keys.config()])
      expect(updatable(key.pk.S), key.pk.S).toBe(false);
    const marker = keys.marker('voter-1').pk.S;
    expect([readable(marker), updatable(marker)]).toEqual([false, false]);
    const otherPoll = new PollKeys('default2', 4);
    expect(readable(otherPoll.total(contestant).pk.S)).toBe(false);

    const env = ttlOnly.template.Resources.AggregateVotesLambdaFunction!.Properties.Environment.Variables;
    // The writers' layout (infra/settings.yml voteShards / registryPartitions, VoteCounter's defaults):
    // without SHARDS the aggregator would sum its own default whatever the writers use.
    expect(env).toEqual({
      NODE_OPTIONS: '--enable-source-maps',
      LOG_LEVEL: 'info',
      TABLE_NAME: { Ref: 'RecordsTable' },
      POLL: 'default',
      SHARDS: '10',
      REGISTRY_PARTITIONS: '4',
    });
    const schedule = resourcesOfType(ttlOnly.template, 'AWS::Events::Rule').find(([id]) =>
      id.startsWith('AggregateVotes'),
    )![1];
    expect(schedule.Properties.ScheduleExpression).toBe('rate(1 minute)');
  });

  it('compacts the archive on a schedule with a role limited to the archive prefix: list, get, put, delete', () => {
    const fn = ttlOnly.template.Resources.CompactArchiveLambdaFunction!.Properties;
    expect(fn.Environment.Variables).toMatchObject({
      ARCHIVE_BUCKET: { Ref: 'ArchiveBucket' },
      ARCHIVE_PREFIX: 'archive/',
      ARCHIVE_ROUTES: 'ttl-deletes',
      TABLE_NAME: { Ref: 'RecordsTable' },
      STORAGE_CLASS: 'STANDARD',
      COMPACT_AFTER_SECONDS: '90000',
      COMPACT_LOOKBACK_HOURS: '48',
    });
    // With all-deletes it compacts user deletes too (the handler derives their prefix).
    expect(
      allDeletes.template.Resources.CompactArchiveLambdaFunction!.Properties.Environment.Variables
        .ARCHIVE_ROUTES,
    ).toBe('all-deletes');
    const schedule = resourcesOfType(ttlOnly.template, 'AWS::Events::Rule').find(([id]) =>
      id.startsWith('CompactArchive'),
    )![1];
    expect(schedule.Properties.ScheduleExpression).toBe('rate(1 hour)');

    const archiveObjects = { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['ArchiveBucket', 'Arn'] }, '/archive/*']] };
    expect(grants(ttlOnly.template, 'CompactArchiveRole')).toEqual({
      WriteLogs: writeLogs('CompactArchiveLogGroup'),
      ListArchive: {
        Action: ['s3:ListBucket'],
        Resource: [{ 'Fn::GetAtt': ['ArchiveBucket', 'Arn'] }],
        Condition: { StringLike: { 's3:prefix': ['archive/*'] } },
      },
      RewriteArchiveObjects: {
        Action: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:DeleteObjectVersion'],
        Resource: [archiveObjects],
        Condition: undefined,
      },
    });
    // With a KMS key: decrypt what it reads, generate data keys for what it writes, on that key only.
    const kms = 'arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000';
    expect(roleStatement(allDeletes.template, 'CompactArchiveRole', 'UseArchiveKey')).toEqual({
      Sid: 'UseArchiveKey',
      Effect: 'Allow',
      Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
      Resource: [kms],
      Condition: {
        StringEquals: {
          'kms:ViaService': [viaService('s3')],
        },
      },
    });
  });

  it('bundles each handler as one ESM file without the AWS SDK and records the sizes', () => {
    const sizes = JSON.parse(readFileSync(path.join(root, 'bench/.out/bundle-sizes.json'), 'utf8')) as {
      functions: Record<string, { zipBytes: number; codeBytes: number; entries: string[] }>;
    };
    expect(Object.keys(sizes.functions).sort()).toEqual([
      'aggregateVotes',
      'archiveTtl',
      'backfillExportFile',
      'compactArchive',
    ]);
    for (const [name, size] of Object.entries(sizes.functions)) {
      const handler = name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
      expect(size.entries.sort()).toEqual([`src/handlers/${handler}.mjs`, `src/handlers/${handler}.mjs.map`]);
      expect(size.codeBytes).toBeGreaterThan(0);
      // @aws-sdk/client-s3 alone bundles to more than this; staying under it shows the SDK is external.
      expect(size.codeBytes).toBeLessThan(600_000);
    }
  });

  it('deploys the backfill state machine: the validated definition, a Distributed Map, its settings and references', () => {
    const machine = ttlOnly.template.Resources.BackfillStateMachine!;
    expect(machine.Type).toBe('AWS::StepFunctions::StateMachine');
    expect(machine.Properties).toMatchObject({
      StateMachineName: 'tidewater-dev-backfill',
      StateMachineType: 'STANDARD',
      RoleArn: { 'Fn::GetAtt': ['BackfillStateMachineRole', 'Arn'] },
    });
    // infra/backfill-map.asl.json with each placeholder replaced by its CloudFormation value.
    const file = JSON.parse(readFileSync(path.join(root, 'infra/backfill-map.asl.json'), 'utf8'));
    const fill = (node: any): any => {
      const values: Record<string, unknown> = {
        '${BackfillFunctionArn}': { 'Fn::GetAtt': ['BackfillExportFileLambdaFunction', 'Arn'] },
        '${ExportBucket}': { Ref: 'ArchiveBucket' },
        '${ResultsBucket}': { Ref: 'ArchiveBucket' },
        '${ResultsPrefix}': 'backfill-results/',
      };
      if (typeof node === 'string') return node in values ? values[node] : node;
      if (Array.isArray(node)) return node.map(fill);
      if (node && typeof node === 'object')
        return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, fill(v)]));
      return node;
    };
    const { Comment: _deployed, ...definition } = machine.Properties.Definition;
    const { Comment: _file, ...expected } = fill(file);
    expect(definition).toEqual(expected);
    const map = definition.States.BackfillDataFiles;
    expect(map.ItemProcessor.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
    expect(map.MaxConcurrency).toBe(40);
    expect(map.ToleratedFailurePercentage).toBe(0);
    const fn = ttlOnly.template.Resources.BackfillExportFileLambdaFunction!.Properties;
    expect(fn.Role).toEqual({ 'Fn::GetAtt': ['BackfillExportFileRole', 'Arn'] });
    expect(fn.Timeout).toBe(900);
    expect(fn.Environment.Variables).toMatchObject({
      ARCHIVE_BUCKET: { Ref: 'ArchiveBucket' },
      ARCHIVE_PREFIX: 'archive/',
      KEY_ATTRIBUTES: 'pk,sk',
      EXPORT_PREFIX: 'exports/',
      DEAD_LETTER_QUEUE_URL: { Ref: 'DeadLetterQueue' },
    });
  });

  it('limits the backfill roles: the state machine to itself, its function, the export and results prefixes', () => {
    const objects = (prefix: string) => [
      { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['ArchiveBucket', 'Arn'] }, `/${prefix}*`]] },
    ];
    const arn = (kind: string, name: string) => [
      {
        'Fn::Join': [
          ':',
          [
            'arn',
            { Ref: 'AWS::Partition' },
            'states',
            { Ref: 'AWS::Region' },
            { Ref: 'AWS::AccountId' },
            kind,
            name,
          ],
        ],
      },
    ];
    expect(grants(ttlOnly.template, 'BackfillStateMachineRole')).toEqual({
      StartChildExecutions: {
        Action: ['states:StartExecution'],
        Resource: arn('stateMachine', 'tidewater-dev-backfill'),
        Condition: undefined,
      },
      ManageChildExecutions: {
        Action: ['states:DescribeExecution', 'states:StopExecution'],
        Resource: arn('execution', 'tidewater-dev-backfill/*'),
        Condition: undefined,
      },
      InvokeBackfillFunction: {
        Action: ['lambda:InvokeFunction'],
        Resource: [{ 'Fn::GetAtt': ['BackfillExportFileLambdaFunction', 'Arn'] }],
        Condition: undefined,
      },
      ReadExportManifests: { Action: ['s3:GetObject'], Resource: objects('exports/'), Condition: undefined },
      WriteResults: {
        Action: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
        Resource: objects('backfill-results/'),
        Condition: undefined,
      },
    });
    const trust = ttlOnly.template.Resources.BackfillStateMachineRole!.Properties.AssumeRolePolicyDocument;
    expect(trust.Statement[0].Principal).toEqual({ Service: 'states.amazonaws.com' });
    expect(grants(ttlOnly.template, 'BackfillExportFileRole')).toEqual({
      WriteLogs: writeLogs('BackfillExportFileLogGroup'),
      ReadExports: { Action: ['s3:GetObject'], Resource: objects('exports/'), Condition: undefined },
      PutArchiveObjects: { Action: ['s3:PutObject'], Resource: objects('archive/'), Condition: undefined },
      PutDeadLetterOverflow: {
        Action: ['s3:PutObject'],
        Resource: objects('dead-letter/'),
        Condition: undefined,
      },
      SendDeadLetters: {
        Action: ['sqs:SendMessage'],
        Resource: [{ 'Fn::GetAtt': ['DeadLetterQueue', 'Arn'] }],
        Condition: undefined,
      },
    });
  });

  it('leaves pino out of the archive bundle: the pipeline logger writes its lines without it', () => {
    // The second packaging (into its own folder) is the one whose zips are still on disk.
    const code = zippedText(path.join(allDeletesDir, 'archiveTtl.zip'), 'src/handlers/archive-ttl.mjs');
    // Booleans, so a failure does not print the whole bundle.
    expect(code.includes('tidewater.dead-letter.pointer'), 'the handler code was read').toBe(true);
    // pino's internal symbols; present whenever pino's module is bundled.
    expect(code.includes('pino.serializers'), 'pino.serializers in the bundle').toBe(false);
    expect(code.includes('pino.levelComp'), 'pino.levelComp in the bundle').toBe(false);
  });
});
