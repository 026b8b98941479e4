// biome-ignore-all lint/suspicious/noExplicitAny: a packaged CloudFormation template is untyped JSON
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dedupViewSql, PARQUET_LOCATION_ROOT } from '../../../src/archive/query-layout.js';
import {
  everyChange,
  forKinesis,
  toFilterCriteria,
  ttlDeletes,
  userDeletes,
} from '../../../src/filters/index.js';
import { changeLogPrefix, userDeletePrefix } from '../../../src/handlers/archive-settings.js';
import { conditionHolds, grants, streamMapping, type Template, viaService } from './template.js';

// Every template `npm run package` can produce, linted with cfn-lint: the default, a KMS key with
// every other setting changed from its default, and the Kinesis variant with the AWS managed key and
// with the user's key. Which resources and statements exist is decided by stack parameters
// (infra/parameters.yml), and cfn-lint checks each condition's both branches, so these four
// also cover the branches their settings switch off; the variants differ in the literal values
// (names, prefixes, filters, rates) serverless writes in.

const root = path.resolve(import.meta.dirname, '../../..');
const KMS_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/00000000-0000-0000-0000-000000000000';

interface Variant {
  name: string;
  args: string[];
  env: Record<string, string>;
}

const VARIANTS: readonly Variant[] = [
  { name: 'default', args: [], env: {} },
  {
    name: 'kms key, every setting changed',
    args: ['--stage', 'prod', '--region', 'eu-west-1'],
    env: {
      TIDEWATER_KMS_KEY_ARN: KMS_KEY,
      TIDEWATER_BUCKET_NAME: 'tidewater-prod-archive-example',
      TIDEWATER_ARCHIVE_ROUTES: 'every-change',
      TIDEWATER_DELETION_PROTECTION: 'false',
      TIDEWATER_TTL_ATTRIBUTE: 'ttl',
      TIDEWATER_STORAGE_CLASS: 'STANDARD_IA',
      TIDEWATER_ARCHIVE_PREFIX: 'cold/',
      TIDEWATER_DEAD_LETTER_PREFIX: 'dlq/',
      TIDEWATER_DEAD_LETTER_EXPIRE_DAYS: '7',
      TIDEWATER_COMPACT_RATE: '2 hours',
      TIDEWATER_POLL: 'finale',
      TIDEWATER_AGGREGATE_RATE: '5 minutes',
      TIDEWATER_BACKFILL_EXPORT_PREFIX: 'exp/',
      TIDEWATER_BACKFILL_RESULTS_PREFIX: 'results/',
      TIDEWATER_LOG_LEVEL: 'debug',
      TIDEWATER_QUERY_TABLES: 'ndjson-and-parquet',
    },
  },
  { name: 'kinesis', args: [], env: { TIDEWATER_ARCHIVE_SOURCE: 'kinesis' } },
  {
    name: 'kinesis with a kms key',
    args: ['--region', 'eu-west-1'],
    // all-deletes here, every-change above: each route's filter and tables are packaged and linted.
    env: {
      TIDEWATER_ARCHIVE_SOURCE: 'kinesis',
      TIDEWATER_KMS_KEY_ARN: KMS_KEY,
      TIDEWATER_ARCHIVE_ROUTES: 'all-deletes',
    },
  },
];

const CFN_LINT_MISSING =
  'cfn-lint is not on PATH: `npm test` lints every packaged template with it. Install it with ' +
  '`pip install cfn-lint` (README, "Work on tidewater"; .ci/run installs it when missing).';

/**
 * The files `npm run package` reads, copied to a folder of their own (node_modules linked): osls
 * and serverless-esbuild write their work folders (.esbuild, .serverless) into the service folder,
 * so packagings running at once, or beside package.test.ts, must not share one.
 */
function serviceCopy(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tidewater-variant-'));
  for (const entry of ['serverless.yml', 'package.json', 'tsconfig.json', 'infra', 'src', 'dist']) {
    cpSync(path.join(root, entry), path.join(dir, entry), { recursive: true });
  }
  cpSync(path.join(root, 'scripts', 'package.js'), path.join(dir, 'scripts', 'package.js'));
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/** `npm run package` in its own copy of the service, without AWS credentials; resolves to the template. */
function packageVariant(variant: Variant, dir: string): Promise<{ file: string; template: Template }> {
  // The test runner's env carries dummy credentials for the local servers; packaging needs none.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.startsWith('AWS_') && !name.startsWith('TIDEWATER_'),
    ),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(dir, 'scripts', 'package.js'), ...variant.args], {
      cwd: dir,
      env: { ...inherited, ...variant.env },
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`npm run package (${variant.name}) exited ${code}:\n${output}`));
        return;
      }
      const file = path.join(dir, '.serverless', 'cloudformation-template-update-stack.json');
      resolve({ file, template: JSON.parse(readFileSync(file, 'utf8')) as Template });
    });
  });
}

interface Finding {
  Filename: string;
  Level: string;
  Message: string;
  Rule: { Id: string };
  Location: { Path: (string | number)[] };
}

const dirs: string[] = [];
const packaged = new Map<string, { file: string; template: Template }>();
let findings: Finding[] = [];

beforeAll(async () => {
  const probe = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) throw new Error(CFN_LINT_MISSING);
  const runs = await Promise.all(
    VARIANTS.map(async (variant) => {
      const dir = serviceCopy();
      dirs.push(dir);
      return [variant.name, await packageVariant(variant, dir)] as const;
    }),
  );
  for (const [name, run] of runs) packaged.set(name, run);
  // Informational findings too: I3011 (a stateful resource without explicit DeletionPolicy and
  // UpdateReplacePolicy) and I3013 (data that expires by a default) are among them.
  const lint = spawnSync(
    'cfn-lint',
    ['--format', 'json', '--include-checks', 'I', '--', ...runs.map(([, run]) => run.file)],
    { encoding: 'utf8', timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
  );
  if (lint.error !== undefined) throw new Error(CFN_LINT_MISSING);
  findings = JSON.parse(lint.stdout || '[]') as Finding[];
}, 900_000);

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const template = (name: string): Template => {
  const run = packaged.get(name);
  if (run === undefined) throw new Error(`variant ${name} was not packaged`);
  return run.template;
};

describe('cfn-lint on every packaged variant', () => {
  it.each(VARIANTS.map((v) => v.name))(
    '%s: no error, no warning, no informational finding but I1022',
    (name) => {
      const file = packaged.get(name)?.file;
      // I1022 (prefer Fn::Sub to Fn::Join) is the one finding allowed: the joins hold serverless
      // variables, and serverless would try to resolve a Fn::Sub's `${Resource.Arn}` as one of its own.
      const ours = findings.filter((f) => f.Filename === file && f.Rule.Id !== 'I1022');
      expect(ours.map((f) => `${f.Rule.Id} ${f.Location.Path.join('/')}: ${f.Message}`)).toEqual([]);
    },
  );

  it('holds no empty ARN, key or name in any branch: switched-off settings are parameters at their Defaults', () => {
    const text = readFileSync(packaged.get('default')!.file, 'utf8');
    const parsed = JSON.parse(text) as Template & { Conditions: Record<string, unknown> };
    expect(parsed.Parameters?.KmsKeyArn?.Default).toBe('');
    // Every condition tests a parameter, none compares two literals (cfn-lint W8003).
    for (const [name, condition] of Object.entries(parsed.Conditions)) {
      expect(JSON.stringify(condition), name).toMatch(
        /"Ref":"(KmsKeyArn|ArchiveBucketName|ArchiveSource|ArchiveQueryTables|ArchiveRoutes)"|"Condition":/,
      );
    }
  });
});

describe('the Kinesis variant (archiveSource: kinesis, infra/kinesis.yml)', () => {
  it('creates the stream, encrypted with alias/aws/kinesis or the configured key, only in that variant', () => {
    for (const [name, reads, usesKey] of [
      ['default', false, false],
      ['kms key, every setting changed', false, true],
      ['kinesis', true, false],
      ['kinesis with a kms key', true, true],
    ] as const) {
      expect(conditionHolds(template(name), 'ArchiveReadsKinesis'), name).toBe(reads);
      expect(conditionHolds(template(name), 'ArchiveReadsDynamoDbStream'), name).toBe(!reads);
      expect(conditionHolds(template(name), 'KinesisUsesKmsKey'), name).toBe(usesKey);
    }
    const stream = template('kinesis').Resources.ChangeStream!;
    expect(stream).toMatchObject({
      Type: 'AWS::Kinesis::Stream',
      Condition: 'ArchiveReadsKinesis',
      DeletionPolicy: 'Delete',
      UpdateReplacePolicy: 'Delete',
    });
    expect(stream.Properties).toEqual({
      Name: 'tidewater-dev-changes',
      StreamModeDetails: { StreamMode: 'ON_DEMAND' },
      RetentionPeriodHours: 24,
      StreamEncryption: {
        EncryptionType: 'KMS',
        KeyId: { 'Fn::If': ['KinesisUsesKmsKey', { Ref: 'KmsKeyArn' }, 'alias/aws/kinesis'] },
      },
    });
    expect(template('kinesis with a kms key').Parameters?.KmsKeyArn?.Default).toBe(KMS_KEY);
  });

  it("streams the table's changes to it at microsecond precision", () => {
    const table = template('kinesis').Resources.RecordsTable!;
    expect(table.Properties.KinesisStreamSpecification).toEqual({
      'Fn::If': [
        'ArchiveReadsKinesis',
        {
          StreamArn: { 'Fn::GetAtt': ['ChangeStream', 'Arn'] },
          ApproximateCreationDateTimePrecision: 'MICROSECOND',
        },
        { Ref: 'AWS::NoValue' },
      ],
    });
    // The DynamoDB stream stays: other consumers, and the local runtime, read it.
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  it("triggers the archive from the stream with its DynamoDB trigger's settings, the filter on data, and tells it the source", () => {
    const t = template('kinesis');
    const kinesis = t.Resources.ArchiveTtlKinesisEventSourceMapping!;
    const dynamodb = streamMapping(t);
    expect(kinesis.Condition).toBe('ArchiveReadsKinesis');
    expect(dynamodb.Condition).toBe('ArchiveReadsDynamoDbStream');
    const same = [
      'StartingPosition',
      'BatchSize',
      'MaximumBatchingWindowInSeconds',
      'FunctionResponseTypes',
      'BisectBatchOnFunctionError',
      'MaximumRetryAttempts',
      'MaximumRecordAgeInSeconds',
      'DestinationConfig',
      'MetricsConfig',
    ];
    for (const key of same) expect(kinesis.Properties[key], key).toEqual(dynamodb.Properties[key]);
    expect(kinesis.Properties).toMatchObject({
      FunctionName: { 'Fn::GetAtt': ['ArchiveTtlLambdaFunction', 'Arn'] },
      EventSourceArn: { 'Fn::GetAtt': ['ChangeStream', 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': ['OnFailureQueue', 'Arn'] } } },
      FilterCriteria: toFilterCriteria(forKinesis([ttlDeletes()])),
    });
    const filter = (name: string) =>
      template(name).Resources.ArchiveTtlKinesisEventSourceMapping!.Properties.FilterCriteria;
    expect(filter('kms key, every setting changed')).toEqual(toFilterCriteria(forKinesis([everyChange()])));
    expect(filter('kinesis with a kms key')).toEqual(
      toFilterCriteria(forKinesis([ttlDeletes(), userDeletes()])),
    );
    const env = (name: string) =>
      template(name).Resources.ArchiveTtlLambdaFunction!.Properties.Environment.Variables.EVENT_SOURCE;
    expect([env('default'), env('kinesis')]).toEqual(['dynamodb-stream', 'kinesis']);
  });

  it('lets the archive role read that stream only, and decrypt it only with the user key, through Kinesis, for that stream', () => {
    const readStream = {
      Action: [
        'kinesis:DescribeStream',
        'kinesis:DescribeStreamSummary',
        'kinesis:GetRecords',
        'kinesis:GetShardIterator',
        'kinesis:ListShards',
        'kinesis:ListStreams',
      ],
      Resource: [{ 'Fn::GetAtt': ['ChangeStream', 'Arn'] }],
      Condition: undefined,
    };
    const role = (name: string) => grants(template(name), 'ArchiveTtlRole');
    expect(role('default').ReadChangeStream).toBeUndefined();
    expect(role('kinesis').ReadChangeStream).toEqual(readStream);
    // The AWS managed key needs no grant.
    expect(role('kinesis').DecryptChangeStream).toBeUndefined();
    expect(role('kms key, every setting changed').DecryptChangeStream).toBeUndefined();
    expect(role('kinesis with a kms key').DecryptChangeStream).toEqual({
      Action: ['kms:Decrypt'],
      Resource: [KMS_KEY],
      Condition: {
        StringEquals: {
          'kms:ViaService': [viaService('kinesis')],
          'kms:EncryptionContext:aws:kinesis:arn': [{ 'Fn::GetAtt': ['ChangeStream', 'Arn'] }],
        },
      },
    });
  });
});

describe("the archive's Athena tables (infra/query.yml, docs/query.md)", () => {
  const made = (name: string) =>
    Object.values(template(name).Resources)
      .filter((r) => r.Type === 'AWS::Glue::Table' || r.Type === 'AWS::Athena::NamedQuery')
      .filter((r) => r.Condition === undefined || conditionHolds(template(name), r.Condition))
      .map((r) => r.Properties.TableInput?.Name ?? r.Properties.Name)
      .sort();

  it("deploys the NDJSON TTL table and its view by default, the change log's with every-change, the user deletes' with all-deletes", () => {
    expect(made('default')).toEqual(['tidewater_dev_archive ttl_archive_dedup view', 'ttl_archive']);
    expect(made('kms key, every setting changed')).toEqual(
      [
        'change_archive',
        'change_archive_parquet',
        'tidewater_prod_archive change_archive_dedup view',
        'tidewater_prod_archive ttl_archive_dedup view',
        'ttl_archive',
        'ttl_archive_parquet',
      ].sort(),
    );
    expect(made('kinesis with a kms key')).toEqual(
      [
        'tidewater_dev_archive ttl_archive_dedup view',
        'tidewater_dev_archive user_delete_archive_dedup view',
        'ttl_archive',
        'user_delete_archive',
      ].sort(),
    );
  });

  it('saves the views the layout writes, and projects the table and the prefixes the settings name', () => {
    const resources = template('kms key, every setting changed').Resources;
    expect(resources.ChangeArchiveDedupView?.Properties.QueryString).toBe(dedupViewSql('change_archive'));
    const input = resources.ChangeArchiveParquetTable?.Properties.TableInput;
    expect(input.Parameters['projection.table.values']).toBe('tidewater-prod-records');
    // Where the archive function writes each archive: under the ARCHIVE_PREFIX it is given.
    const archivePrefix = (name: string) =>
      template(name).Resources.ArchiveTtlLambdaFunction!.Properties.Environment.Variables.ARCHIVE_PREFIX;
    expect(archivePrefix('kms key, every setting changed')).toBe('cold/');
    expect(input.StorageDescriptor.Location['Fn::Join'][1]).toEqual([
      's3://',
      { Ref: 'ArchiveBucket' },
      // The Parquet table reads the change log's own Parquet root, beside its NDJSON partitions.
      `/${changeLogPrefix(archivePrefix('kms key, every setting changed'))}${PARQUET_LOCATION_ROOT}`,
    ]);
    const userDeleteInput =
      template('kinesis with a kms key').Resources.UserDeleteArchiveTable?.Properties.TableInput;
    expect(userDeleteInput.StorageDescriptor.Location['Fn::Join'][1]).toEqual([
      's3://',
      { Ref: 'ArchiveBucket' },
      `/${userDeletePrefix(archivePrefix('kinesis with a kms key'))}`,
    ]);
  });
});
