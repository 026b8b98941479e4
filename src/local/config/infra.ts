import { accessSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { defineOptions } from '../../core/index.js';
import { LOCAL_REGION } from '../servers/dynamodb-local.js';
import { InfraDefinitionError } from './errors.js';
import { isRecord } from './intrinsics.js';
import {
  type PlannedBucket,
  type PlannedQueue,
  type PlannedTable,
  planTemplateParts,
  type ResolvedResource,
} from './template.js';
import { resolveSync, VariableResolver } from './variables.js';

/**
 * The local runtime's table, bucket and queues come from the same infra/*.yml that serverless.yml
 * deploys, with the same settings (infra/settings.yml), so local replay and production cannot
 * disagree on key schema, stream view type, TTL attribute or names. infra/ is read as
 * serverless.yml holds it — settings.yml as `custom.tidewater`, the other files as `resources:` —
 * by the same variable resolver and template planner as any serverless.yml.
 */

/** infra/settings.yml, resolved. docs/deploy.md describes every key. */
export interface InfraSettings {
  tableName: string;
  bucketName: string;
  onFailureQueueName: string;
  deadLetterQueueName: string;
  ttlAttribute: string;
  deletionProtection: boolean;
  archivePrefix: string;
  /** Where dead-letter entries too large for an SQS message go in the archive bucket. */
  deadLetterPrefix: string;
  storageClass: string;
  glacierAfterDays: number;
  deepArchiveAfterDays: number;
  noncurrentExpireAfterDays: number;
  kmsKeyArn: string;
  archiveRoutes: string;
  /** `dynamodb-stream` or `kinesis`: the archive function's event source (infra/kinesis.yml). */
  archiveSource: string;
  kinesisStreamName: string;
  kinesisRetentionHours: number;
  batchSize: number;
  maximumBatchingWindow: number;
  maximumRetryAttempts: number;
  maximumRecordAgeInSeconds: number;
  archiveTimeout: number;
  deadLetterAfterAgeSeconds: number;
  /** The archive's Athena tables (infra/query.yml): `none`, `ndjson`, `parquet` or `ndjson-and-parquet`. */
  queryTables: string;
  /** The Glue database holding them. */
  queryDatabase: string;
  poll: string;
  /** The poll's layout the aggregator expects (VoteCounter's shards and registry partitions). */
  voteShards: number;
  registryPartitions: number;
  aggregateRate: string;
  logRetentionDays: number;
  /** The backfill state machine (infra/backfill.yml, docs/backfill.md): its name, prefixes and Map settings. */
  backfillStateMachineName: string;
  backfillExportPrefix: string;
  backfillResultsPrefix: string;
  backfillMaxConcurrency: number;
  backfillToleratedFailurePercentage: number;
  backfillTimeout: number;
}

/** Options of planLocalResources: stage and service. */
export interface InfraOptions {
  /** Replaces `${sls:stage}`. Default `local`. */
  stage?: string;
  /** Replaces `${self:service}`; must match serverless.yml's `service`. Default `tidewater`. */
  service?: string;
  /** Region used in the ARNs the local runtime makes up. Default us-east-1 (DynamoDB Local's). */
  region?: string;
  /** Read for `${env:NAME, 'default'}`. Default `process.env`, as `serverless package` does. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Settings to replace after resolution; an unknown key or a wrong type throws. */
  overrides?: Partial<InfraSettings>;
  /** The folder holding settings.yml, parameters.yml, table.yml, bucket.yml, queues.yml. Default: the package's infra/. */
  infraDir?: string | URL;
}

/** tidewater's infra/ resources as planned for one stage: the stack and its tables, buckets, queues. */
export interface InfraPlan {
  readonly stage: string;
  /** `<service>-<stage>`, as CloudFormation names the stack. */
  readonly stackName: string;
  /** The region in the ARNs made up locally. */
  readonly region: string;
  readonly settings: Readonly<InfraSettings>;
  readonly table: PlannedTable;
  readonly bucket: PlannedBucket;
  readonly queues: readonly PlannedQueue[];
  /** `<LogicalId>.<Property>` (or a whole resource) that deploys but that the local servers do not emulate. */
  readonly notEmulated: readonly string[];
}

/** The option rules createLocalResources shares. */
export const INFRA_OPTIONS = {
  stage: { kind: 'nonEmptyString', default: 'local' },
  service: { kind: 'nonEmptyString', default: 'tidewater' },
  region: { kind: 'nonEmptyString', default: LOCAL_REGION },
  env: { kind: 'object' },
  overrides: { kind: 'object' },
  infraDir: {
    kind: 'custom',
    expected: 'a folder path or file: URL',
    check: (value: unknown) => typeof value === 'string' || value instanceof URL,
  },
} as const;

const readOptions = defineOptions<InfraOptions>()('planLocalResources', INFRA_OPTIONS);

const DEFAULT_INFRA_DIR = new URL('../../../infra/', import.meta.url);
const SETTINGS_FILE = 'settings.yml';
// The stack's parameters: settings that switch resources on or off (their Defaults come from
// settings.yml), declared once for every resource file.
const PARAMETERS_FILE = 'parameters.yml';
const RESOURCE_FILES = ['table.yml', 'bucket.yml', 'queues.yml'] as const;
const KINESIS_FILE = 'kinesis.yml';

/**
 * Reads infra/ and resolves it for one stage without touching any server: the table's
 * CreateTable input, the bucket name, the queues' attributes, and what is deployed but not emulated.
 */
export function planLocalResources(options: InfraOptions = {}): InfraPlan {
  const { stage, service, region, env = process.env, overrides, infraDir } = readOptions(options);
  const dir = infraDirUrl(infraDir);
  for (const file of [SETTINGS_FILE, PARAMETERS_FILE, ...RESOURCE_FILES]) {
    try {
      accessSync(new URL(file, dir));
    } catch (error) {
      throw new InfraDefinitionError(
        file,
        `cannot read ${fileURLToPath(new URL(file, dir))}: ${(error as Error).message}`,
      );
    }
  }
  // serverless.yml's view of infra/: what `${self:…}`, `${sls:stage}` and `${file(…)}` read.
  const resolveAs = (where: string, custom: unknown, text: string) =>
    resolveSync(
      new VariableResolver({
        document: { service, custom: { tidewater: custom } },
        file: fileURLToPath(new URL('serverless.yml', dir)),
        options: { stage, region },
        env,
        fail: (message) => new InfraDefinitionError(where, message),
      }).deep(text),
    );
  const settings = withOverrides(
    resolveAs(SETTINGS_FILE, undefined, `\${file(./${SETTINGS_FILE})}`),
    overrides,
  );
  const parameters = resolveAs(PARAMETERS_FILE, settings, `\${file(./${PARAMETERS_FILE})}`);
  if (!isRecord(parameters) || !isRecord(parameters.Parameters))
    throw new InfraDefinitionError(PARAMETERS_FILE, 'has no Parameters mapping');
  // The table's KinesisStreamSpecification is an Fn::If on kinesis.yml's conditions; its
  // resources (the stream, the Kinesis trigger) are serverless.yml's, not the archive's plan.
  const kinesisConditions = resolveAs(KINESIS_FILE, settings, `\${file(./${KINESIS_FILE}):Conditions}`);
  const plan = planTemplateParts(
    [
      { where: PARAMETERS_FILE, document: parameters },
      { where: KINESIS_FILE, document: { Conditions: kinesisConditions } },
      ...RESOURCE_FILES.map((file) => {
        const document = resolveAs(file, settings, `\${file(./${file})}`);
        if (!isRecord(document) || !isRecord(document.Resources))
          throw new InfraDefinitionError(file, 'has no Resources mapping');
        return { where: file, document };
      }),
    ],
    { service, stage, region, source: 'infra' },
  );
  const single = <T extends ResolvedResource>(found: readonly T[], type: string): T => {
    if (found.length !== 1)
      throw new InfraDefinitionError('infra', `expected exactly one ${type}, found ${found.length}`);
    return found[0] as T;
  };
  const table = single(plan.tables, 'AWS::DynamoDB::Table');
  if (!table.createTable.StreamSpecification)
    throw new InfraDefinitionError('table.yml', `${table.logicalId} has no stream; the archive needs one`);
  const bucket = single(plan.buckets, 'AWS::S3::Bucket');
  return {
    stage,
    stackName: plan.stackName,
    region,
    settings,
    table,
    // An empty bucketName leaves the name to CloudFormation (random); locally a stable name per
    // stage lets restarts find the bucket.
    bucket:
      typeof bucket.properties.BucketName === 'string'
        ? bucket
        : { ...bucket, bucketName: `${plan.stackName}-archive`.toLowerCase().replace(/[^a-z0-9.-]/g, '-') },
    queues: plan.queues,
    notEmulated: plan.notEmulated,
  };
}

/** settings.yml's values with `overrides` over them; an unknown key or another type throws. */
function withOverrides(resolved: unknown, overrides: Partial<InfraSettings> | undefined): InfraSettings {
  if (!isRecord(resolved)) throw new InfraDefinitionError(SETTINGS_FILE, 'is not a mapping');
  const settings = { ...resolved };
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (!(key in settings)) {
      throw new InfraDefinitionError(
        'overrides',
        `unknown setting "${key}" (known: ${Object.keys(settings).join(', ')})`,
      );
    }
    if (typeof value !== typeof settings[key]) {
      throw new InfraDefinitionError(
        'overrides',
        `setting "${key}" must be a ${typeof settings[key]}, got ${typeof value}`,
      );
    }
    settings[key] = value;
  }
  return settings as unknown as InfraSettings;
}

/** A folder as a file: URL ending in `/`, so infra file names resolve inside it (a path is taken from the cwd). */
function infraDirUrl(infraDir: string | URL | undefined): URL {
  if (infraDir === undefined) return DEFAULT_INFRA_DIR;
  const text = String(infraDir);
  const url = text.startsWith('file:') ? new URL(text) : pathToFileURL(path.resolve(text));
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}
