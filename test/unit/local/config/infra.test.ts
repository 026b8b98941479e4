// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are serverless variables, not template literals
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../../src/core/index.js';
import { InfraDefinitionError } from '../../../../src/local/config/errors.js';
import { planLocalResources } from '../../../../src/local/config/infra.js';
import { VoteCounter } from '../../../../src/votes/index.js';
import { DEFAULT_REGISTRY_PARTITIONS, DEFAULT_SHARDS } from '../../../../src/votes/options.js';

const root = path.resolve(import.meta.dirname, '../../../..');
const kms = 'arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000';

describe('infra/ files', () => {
  const files = readdirSync(path.join(root, 'infra')).filter((f) => f.endsWith('.yml'));

  it('load with plain js-yaml: long-form intrinsics only, no CloudFormation short tags', () => {
    expect(files.sort()).toEqual([
      'alarms.yml',
      'backfill.yml',
      'bucket.yml',
      'functions.yml',
      'iam.yml',
      'kinesis.yml',
      'parameters.yml',
      'query.yml',
      'queues.yml',
      'settings.yml',
      'table.yml',
    ]);
    for (const file of files) {
      const text = readFileSync(path.join(root, 'infra', file), 'utf8');
      expect(text, file).not.toMatch(
        /!(Ref|GetAtt|Sub|Join|If|Equals|Not|And|Or|Select|Split|ImportValue|FindInMap|Base64|Condition)\b/,
      );
      expect(() => yaml.load(text), file).not.toThrow();
    }
  });

  it('are what serverless.yml deploys, with infra/settings.yml as custom.tidewater', () => {
    const config = yaml.load(readFileSync(path.join(root, 'serverless.yml'), 'utf8')) as {
      service: string;
      custom: { tidewater: string };
      resources: string[];
    };
    // planLocalResources' default service name must be the deployed one.
    expect(config.service).toBe('tidewater');
    expect(config.custom.tidewater).toBe('${file(./infra/settings.yml)}');
    expect(config.resources).toEqual([
      '${file(./infra/parameters.yml)}',
      '${file(./infra/table.yml)}',
      '${file(./infra/bucket.yml)}',
      '${file(./infra/queues.yml)}',
      '${file(./infra/iam.yml)}',
      '${file(./infra/alarms.yml)}',
      '${file(./infra/backfill.yml)}',
      '${file(./infra/kinesis.yml)}',
      '${file(./infra/query.yml)}',
      '${file(./infra/functions.yml)}',
    ]);
  });
});

describe('planLocalResources', () => {
  it('resolves the table, bucket and queues for a stage from the deployed definitions', () => {
    const plan = planLocalResources({ stage: 'dev', env: {} });
    expect(plan.settings.ttlAttribute).toBe('expiresAt');
    expect(plan.settings.deletionProtection).toBe(true);
    expect(plan.settings.glacierAfterDays).toBe(30);
    // The aggregator's layout defaults are VoteCounter's, so writers that omit both agree with it.
    const votes = plan.settings;
    expect(votes.voteShards).toBe(new VoteCounter({ tableName: 't', poll: 'p' }).shards);
    expect(votes.voteShards).toBe(DEFAULT_SHARDS);
    expect(votes.registryPartitions).toBe(DEFAULT_REGISTRY_PARTITIONS);
    expect(plan.table.createTable).toEqual({
      TableName: 'tidewater-dev-records',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
    expect(plan.table.ttlAttribute).toBe('expiresAt');
    // An empty bucketName means "let CloudFormation name it"; locally the name is stable per stage.
    expect(plan.bucket.bucketName).toBe('tidewater-dev-archive');
    expect(plan.queues.map((q) => [q.logicalId, q.queueName, q.attributes])).toEqual([
      [
        'OnFailureQueue',
        'tidewater-dev-archive-on-failure',
        { MessageRetentionPeriod: '1209600', SqsManagedSseEnabled: 'true' },
      ],
      [
        'DeadLetterQueue',
        'tidewater-dev-archive-dead-letter',
        { MessageRetentionPeriod: '1209600', SqsManagedSseEnabled: 'true' },
      ],
    ]);
  });

  it('lists what deploys but is not emulated locally', () => {
    const { notEmulated } = planLocalResources({ env: {} });
    for (const item of [
      'RecordsTable.PointInTimeRecoverySpecification',
      'RecordsTable.DeletionProtectionEnabled',
      'ArchiveBucket.PublicAccessBlockConfiguration',
      'ArchiveBucket.BucketEncryption',
      'ArchiveBucket.VersioningConfiguration',
      'ArchiveBucket.LifecycleConfiguration',
      'ArchiveBucketPolicy',
      'QueuesTlsOnlyPolicy',
    ]) {
      expect(notEmulated).toContain(item);
    }
  });

  it('reads ${env:...} settings the way serverless does, fallbacks and strToBool included', () => {
    const plan = planLocalResources({
      stage: 'ci',
      env: {
        TIDEWATER_TTL_ATTRIBUTE: 'ttl',
        TIDEWATER_BUCKET_NAME: 'my-archive',
        TIDEWATER_KMS_KEY_ARN: kms,
        TIDEWATER_DELETION_PROTECTION: 'false',
      },
    });
    expect(plan.table.ttlAttribute).toBe('ttl');
    expect(plan.settings.deletionProtection).toBe(false);
    expect(plan.bucket.bucketName).toBe('my-archive');
    for (const queue of plan.queues)
      expect(queue.attributes).toEqual({ MessageRetentionPeriod: '1209600', KmsMasterKeyId: kms });
    expect(() => planLocalResources({ env: { TIDEWATER_DELETION_PROTECTION: 'nope' } })).toThrow(
      InfraDefinitionError,
    );
  });

  it('applies overrides after resolution and rejects unknown or mistyped ones', () => {
    const plan = planLocalResources({ env: {}, overrides: { tableName: 'replay', ttlAttribute: 'ttl' } });
    expect(plan.table.createTable.TableName).toBe('replay');
    expect(plan.table.ttlAttribute).toBe('ttl');
    expect(() => planLocalResources({ env: {}, overrides: { ttlAtribute: 'x' } as never })).toThrow(
      /unknown setting "ttlAtribute"/,
    );
    expect(() => planLocalResources({ env: {}, overrides: { batchSize: '10' } as never })).toThrow(
      /must be a number/,
    );
    expect(() => planLocalResources({ env: {}, stag: 'x' } as never)).toThrow(InvalidOptionsError);
    expect(() => planLocalResources({ env: {}, stag: 'x' } as never)).toThrow(
      /planLocalResources: unknown option 'stag'/,
    );
  });

  it('names the file and setting when an infra folder is broken', () => {
    expect(() => planLocalResources({ infraDir: path.join(root, 'test') })).toThrow(
      /settings\.yml: cannot read/,
    );
  });
});
