import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type KeySchemaElement,
  ResourceInUseException,
  type StreamViewType,
  type TableDescription,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import yaml from 'js-yaml';
import { LOCAL_REGION } from './dynamodb-local.js';
import { literalSource, strToBool } from './variables.js';

/**
 * The local runtime's table, bucket and queues come from the same infra/*.yml that serverless.yml
 * deploys, with the same settings (infra/settings.yml), so local replay and production cannot
 * disagree on key schema, stream view type, TTL attribute or names.
 */

/** An infra/ file or a setting could not be read or resolved. */
export class InfraDefinitionError extends Error {
  override readonly name = 'InfraDefinitionError';
  constructor(
    readonly where: string,
    message: string,
  ) {
    super(`${where}: ${message}`);
  }
}

/** A resource already exists on the local server with a definition that differs from infra/. */
export class LocalResourceConflictError extends Error {
  override readonly name = 'LocalResourceConflictError';
  constructor(
    readonly resource: string,
    message: string,
  ) {
    super(`${resource}: ${message}`);
  }
}

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
  batchSize: number;
  maximumBatchingWindow: number;
  maximumRetryAttempts: number;
  maximumRecordAgeInSeconds: number;
  archiveTimeout: number;
  deadLetterAfterAgeSeconds: number;
  poll: string;
  /** The poll's layout the aggregator expects (VoteCounter's shards and registry partitions). */
  voteShards: number;
  registryPartitions: number;
  aggregateRate: string;
  logRetentionDays: number;
}

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
  /** The folder holding settings.yml, table.yml, bucket.yml, queues.yml. Default: the package's infra/. */
  infraDir?: string | URL;
}

export interface LocalResourcesOptions extends InfraOptions {
  dynamodb: DynamoDBClient;
  s3: S3Client;
  /** When given, the queues are created too (the test run has no SQS server, so it is optional). */
  sqs?: SQSClient;
}

/** One resource of infra/, with its properties resolved for the local servers. */
export interface ResolvedResource {
  readonly logicalId: string;
  readonly type: string;
  readonly properties: Readonly<Record<string, unknown>>;
}

export interface InfraPlan {
  readonly stage: string;
  readonly settings: Readonly<InfraSettings>;
  readonly table: ResolvedResource & {
    readonly createTable: CreateTableCommandInput;
    readonly ttlAttribute?: string;
  };
  readonly bucket: ResolvedResource & { readonly bucketName: string };
  readonly queues: readonly (ResolvedResource & {
    readonly queueName: string;
    readonly attributes: Record<string, string>;
  })[];
  /** `<LogicalId>.<Property>` (or a whole resource) that deploys but that the local servers do not emulate. */
  readonly notEmulated: readonly string[];
}

export interface LocalQueue {
  readonly name: string;
  readonly url: string;
  readonly arn: string;
}

export interface LocalResources {
  readonly stage: string;
  readonly settings: Readonly<InfraSettings>;
  readonly table: {
    readonly name: string;
    readonly arn: string;
    readonly streamArn: string;
    readonly ttlAttribute?: string;
  };
  readonly bucket: { readonly name: string; readonly archivePrefix: string };
  /** By logical id (OnFailureQueue, DeadLetterQueue); present when an SQS client was given. */
  readonly queues?: Readonly<Record<string, LocalQueue>>;
  readonly notEmulated: readonly string[];
}

const DEFAULT_INFRA_DIR = new URL('../../infra/', import.meta.url);
const RESOURCE_FILES = ['table.yml', 'bucket.yml', 'queues.yml'] as const;
const LOCAL_ACCOUNT_ID = '000000000000';
const NO_VALUE: unique symbol = Symbol('AWS::NoValue');
const OPTION_KEYS = new Set([
  'stage',
  'service',
  'region',
  'env',
  'overrides',
  'infraDir',
  'dynamodb',
  's3',
  'sqs',
]);

// CloudFormation properties DynamoDB Local / s3rver / an SQS emulator accept, per resource type.
// Everything else is listed in `notEmulated` so nobody mistakes a local run for a security test.
const EMULATED: Record<string, ReadonlySet<string>> = {
  'AWS::DynamoDB::Table': new Set([
    'TableName',
    'BillingMode',
    'AttributeDefinitions',
    'KeySchema',
    'StreamSpecification',
    'TimeToLiveSpecification',
    'ProvisionedThroughput',
    'GlobalSecondaryIndexes',
    'LocalSecondaryIndexes',
  ]),
  'AWS::S3::Bucket': new Set(['BucketName']),
  'AWS::SQS::Queue': new Set([
    'QueueName',
    'MessageRetentionPeriod',
    'SqsManagedSseEnabled',
    'KmsMasterKeyId',
  ]),
};

function readYaml(dir: URL, file: string): unknown {
  const url = new URL(file, dir);
  let text: string;
  try {
    text = readFileSync(url, 'utf8');
  } catch (error) {
    throw new InfraDefinitionError(file, `cannot read ${url.pathname}: ${(error as Error).message}`);
  }
  try {
    return yaml.load(text, { filename: file });
  } catch (error) {
    throw new InfraDefinitionError(file, (error as Error).message);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Scalar = string | number | boolean;

/**
 * Resolves the serverless variable forms infra/ uses: ${self:service}, ${self:custom.tidewater.X},
 * ${sls:stage}, ${env:NAME, 'fallback'} and ${strToBool(...)}, innermost first, as the framework
 * does. A string that is exactly one variable keeps the variable's type (numbers, booleans).
 */
function resolveVariables(text: string, lookup: (source: string) => Scalar): Scalar {
  let current: string = text;
  const innermost = /\$\{([^${}]*)\}/;
  for (;;) {
    const match = innermost.exec(current);
    if (!match) return current;
    const value = lookup((match[1] ?? '').trim());
    if (match[0].length === current.length) return value;
    current = current.slice(0, match.index) + String(value) + current.slice(match.index + match[0].length);
  }
}

function variableLookup(
  where: string,
  context: { stage: string; service: string; env: InfraOptions['env']; settings?: InfraSettings },
) {
  return (source: string): Scalar => {
    const bool = /^strToBool\((.*)\)$/s.exec(source);
    if (bool) {
      const value = strToBool(bool[1] ?? '');
      if (value === undefined)
        throw new InfraDefinitionError(
          where,
          `strToBool(${(bool[1] ?? '').trim()}): expected true, false, 1 or 0`,
        );
      return value;
    }
    const candidates = source.split(',').map((part) => part.trim());
    for (const candidate of candidates) {
      const literal = literalSource(candidate);
      if (literal) return literal.value;
      if (candidate === 'sls:stage') return context.stage;
      if (candidate === 'self:service') return context.service;
      if (candidate.startsWith('env:')) {
        const value = context.env?.[candidate.slice(4)];
        if (value !== undefined && value !== '') return value;
        continue;
      }
      if (candidate.startsWith('self:custom.tidewater.')) {
        const key = candidate.slice('self:custom.tidewater.'.length);
        if (!context.settings)
          throw new InfraDefinitionError(
            where,
            `\${${candidate}} cannot refer to settings from settings.yml`,
          );
        const value = (context.settings as unknown as Record<string, Scalar | undefined>)[key];
        if (value === undefined)
          throw new InfraDefinitionError(where, `\${${candidate}}: no setting "${key}" in settings.yml`);
        return value;
      }
      throw new InfraDefinitionError(
        where,
        `unsupported variable \${${source}} (see docs/deploy.md for the forms infra/ may use)`,
      );
    }
    throw new InfraDefinitionError(where, `\${${source}} has no value and no fallback`);
  };
}

function resolveTree(node: unknown, where: string, lookup: (source: string) => Scalar): unknown {
  if (typeof node === 'string') return node.includes('${') ? resolveVariables(node, lookup) : node;
  if (Array.isArray(node)) return node.map((item, i) => resolveTree(item, `${where}[${i}]`, lookup));
  if (isRecord(node)) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) out[key] = resolveTree(value, `${where}.${key}`, lookup);
    return out;
  }
  return node;
}

function readSettings(
  dir: URL,
  context: { stage: string; service: string; env: InfraOptions['env'] },
  overrides: Partial<InfraSettings> | undefined,
) {
  const raw = readYaml(dir, 'settings.yml');
  if (!isRecord(raw)) throw new InfraDefinitionError('settings.yml', 'is not a mapping');
  const settings = resolveTree(raw, 'settings.yml', variableLookup('settings.yml', context)) as Record<
    string,
    Scalar
  >;
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
    settings[key] = value as Scalar;
  }
  return settings as unknown as InfraSettings;
}

interface IntrinsicContext {
  region: string;
  stackName: string;
  conditions: Record<string, unknown>;
  evaluatedConditions: Map<string, boolean>;
  where: string;
  /** The local resources `Ref` and `Fn::GetAtt` may name; without it they are errors. */
  refs?: Readonly<Record<string, LocalResourceRef>>;
}

/** What `Ref` and `Fn::GetAtt` give for one local resource (a table's name, a queue's URL, its ARN…). */
export interface LocalResourceRef {
  readonly type: string;
  /** `Ref`: a table's or bucket's name, a queue's URL. */
  readonly ref: string;
  /** `Fn::GetAtt` by attribute name: Arn, StreamArn, QueueName, QueueUrl, DomainName… */
  readonly attributes: Readonly<Record<string, string>>;
}

function resourceRef(name: string, context: IntrinsicContext): string | undefined {
  return context.refs?.[name]?.ref;
}

function resourceAttribute(id: string, attribute: string, context: IntrinsicContext): string {
  const target = context.refs?.[id];
  const value = target?.attributes[attribute];
  if (value === undefined) {
    throw new InfraDefinitionError(
      context.where,
      target
        ? `Fn::GetAtt ${id}.${attribute}: ${target.type} ${id} has no ${attribute} locally (has ${Object.keys(target.attributes).join(', ') || 'none'})`
        : `Fn::GetAtt ${id}.${attribute} is not available locally`,
    );
  }
  return value;
}

function pseudo(name: string, context: IntrinsicContext): string | typeof NO_VALUE | undefined {
  switch (name) {
    case 'AWS::NoValue':
      return NO_VALUE;
    case 'AWS::Region':
      return context.region;
    case 'AWS::AccountId':
      return LOCAL_ACCOUNT_ID;
    case 'AWS::Partition':
      return 'aws';
    case 'AWS::StackName':
      return context.stackName;
    case 'AWS::URLSuffix':
      return 'amazonaws.com';
    default:
      return undefined;
  }
}

function condition(name: string, context: IntrinsicContext): boolean {
  const known = context.evaluatedConditions.get(name);
  if (known !== undefined) return known;
  if (!(name in context.conditions))
    throw new InfraDefinitionError(context.where, `unknown condition "${name}"`);
  const value = evaluate(context.conditions[name], context);
  if (typeof value !== 'boolean')
    throw new InfraDefinitionError(context.where, `condition "${name}" is not a boolean`);
  context.evaluatedConditions.set(name, value);
  return value;
}

/**
 * The intrinsics the emulated properties of table/bucket/queue use, evaluated as CloudFormation
 * would. Refs to other resources and Fn::GetAtt never appear in emulated properties, so meeting
 * one there is an error rather than a guess.
 */
function evaluate(node: unknown, context: IntrinsicContext): unknown {
  if (Array.isArray(node))
    return node.map((item) => evaluate(item, context)).filter((item) => item !== NO_VALUE);
  if (!isRecord(node)) return node;
  const keys = Object.keys(node);
  if (keys.length === 1) {
    const key = keys[0] as string;
    const arg = node[key];
    const list = (count: number): unknown[] => {
      if (!Array.isArray(arg) || arg.length !== count)
        throw new InfraDefinitionError(context.where, `${key} takes ${count} arguments`);
      return arg;
    };
    switch (key) {
      case 'Ref': {
        const value = pseudo(String(arg), context) ?? resourceRef(String(arg), context);
        if (value === undefined)
          throw new InfraDefinitionError(context.where, `Ref ${String(arg)} is not available locally`);
        return value;
      }
      case 'Fn::GetAtt': {
        const [id, attribute] = typeof arg === 'string' ? arg.split(/\.(.*)/s) : list(2);
        return resourceAttribute(String(id), String(evaluate(attribute, context)), context);
      }
      case 'Condition':
        return condition(String(arg), context);
      case 'Fn::If': {
        const [name, whenTrue, whenFalse] = list(3);
        return evaluate(condition(String(name), context) ? whenTrue : whenFalse, context);
      }
      case 'Fn::Equals': {
        const [a, b] = list(2).map((item) => evaluate(item, context));
        return JSON.stringify(a) === JSON.stringify(b);
      }
      case 'Fn::Not':
        return !evaluate(list(1)[0], context);
      case 'Fn::And':
        return (arg as unknown[]).every((item) => evaluate(item, context) === true);
      case 'Fn::Or':
        return (arg as unknown[]).some((item) => evaluate(item, context) === true);
      case 'Fn::Join': {
        const [delimiter, items] = list(2);
        return (evaluate(items, context) as unknown[]).map(String).join(String(delimiter));
      }
      case 'Fn::Sub': {
        const [template, variables] = typeof arg === 'string' ? [arg, {}] : list(2);
        const values = evaluate(variables, context) as Record<string, unknown>;
        return String(template).replace(/\$\{(!?)([^}]+)\}/g, (whole, bang: string, name: string) => {
          if (bang) return `\${${name}}`;
          if (name in values) return String(values[name]);
          if (context.refs && name.includes('.') && !name.startsWith('AWS::')) {
            const [id, attribute] = name.split(/\.(.*)/s);
            return resourceAttribute(String(id), String(attribute), context);
          }
          const value = pseudo(name, context) ?? resourceRef(name, context);
          if (value === undefined || value === NO_VALUE) {
            throw new InfraDefinitionError(context.where, `Fn::Sub ${whole} is not available locally`);
          }
          return value;
        });
      }
      default:
        if (key.startsWith('Fn::'))
          throw new InfraDefinitionError(context.where, `${key} is not supported locally`);
    }
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const resolved = evaluate(value, context);
    if (resolved !== NO_VALUE) out[key] = resolved;
  }
  return out;
}

/** A folder as a file: URL ending in `/`, so infra file names resolve inside it (a path is taken from the cwd). */
function infraDirUrl(infraDir: string | URL | undefined): URL {
  if (infraDir === undefined) return DEFAULT_INFRA_DIR;
  const text = String(infraDir);
  const url = text.startsWith('file:') ? new URL(text) : pathToFileURL(path.resolve(text));
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

function localBucketName(stackName: string): string {
  // What CloudFormation would generate is random; locally a stable name lets restarts find the bucket.
  return `${stackName}-archive`.toLowerCase().replace(/[^a-z0-9.-]/g, '-');
}

function validateOptions(options: object, allowed: ReadonlySet<string>): void {
  for (const key of Object.keys(options)) {
    if (!allowed.has(key)) throw new InfraDefinitionError('options', `unknown option "${key}"`);
  }
}

/**
 * The emulated part of each resource, its intrinsics evaluated; everything else in `notEmulated`.
 * One reader for infra/ and for serverless.yml's `resources:`, so both resolve the same way.
 */
function resolveResources(
  raw: readonly { file: string; logicalId: string; definition: Record<string, unknown> }[],
  context: IntrinsicContext,
): { resources: ResolvedResource[]; notEmulated: string[] } {
  const resources: ResolvedResource[] = [];
  const notEmulated: string[] = [];
  for (const { file, logicalId, definition } of raw) {
    const type = String(definition.Type);
    const emulated = EMULATED[type];
    if (!emulated) {
      notEmulated.push(logicalId);
      continue;
    }
    const properties: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(isRecord(definition.Properties) ? definition.Properties : {})) {
      if (!emulated.has(key)) {
        notEmulated.push(`${logicalId}.${key}`);
        continue;
      }
      const resolved = evaluate(value, { ...context, where: `${file}: ${logicalId}.${key}` });
      if (resolved !== NO_VALUE) properties[key] = resolved;
    }
    resources.push({ logicalId, type, properties });
  }
  return { resources, notEmulated };
}

type TableProperties = {
  TableName?: string;
  BillingMode?: CreateTableCommandInput['BillingMode'];
  AttributeDefinitions?: CreateTableCommandInput['AttributeDefinitions'];
  KeySchema?: KeySchemaElement[];
  ProvisionedThroughput?: CreateTableCommandInput['ProvisionedThroughput'];
  StreamSpecification?: { StreamViewType?: StreamViewType; StreamEnabled?: boolean };
  TimeToLiveSpecification?: { AttributeName?: string; Enabled?: boolean };
  GlobalSecondaryIndexes?: CreateTableCommandInput['GlobalSecondaryIndexes'];
  LocalSecondaryIndexes?: CreateTableCommandInput['LocalSecondaryIndexes'];
};

/** A table resource as CreateTable input, plus its TTL attribute; `name` when TableName is absent. */
function planTable(table: ResolvedResource, where: string, name?: string): PlannedTable {
  const p = table.properties as TableProperties;
  const tableName = p.TableName ?? name;
  if (!tableName || !p.KeySchema || !p.AttributeDefinitions) {
    throw new InfraDefinitionError(
      where,
      `${table.logicalId} needs ${name ? '' : 'TableName, '}KeySchema and AttributeDefinitions`,
    );
  }
  const viewType =
    p.StreamSpecification?.StreamEnabled === false ? undefined : p.StreamSpecification?.StreamViewType;
  const ttl = p.TimeToLiveSpecification;
  const createTable: CreateTableCommandInput = {
    TableName: tableName,
    BillingMode: p.BillingMode,
    AttributeDefinitions: p.AttributeDefinitions,
    KeySchema: p.KeySchema,
    ...(p.ProvisionedThroughput ? { ProvisionedThroughput: p.ProvisionedThroughput } : {}),
    ...(viewType ? { StreamSpecification: { StreamEnabled: true, StreamViewType: viewType } } : {}),
    ...(p.GlobalSecondaryIndexes ? { GlobalSecondaryIndexes: p.GlobalSecondaryIndexes } : {}),
    ...(p.LocalSecondaryIndexes ? { LocalSecondaryIndexes: p.LocalSecondaryIndexes } : {}),
  };
  return {
    ...table,
    createTable,
    ...(ttl?.Enabled && ttl.AttributeName ? { ttlAttribute: ttl.AttributeName } : {}),
  };
}

function planQueue(queue: ResolvedResource, name: string): PlannedQueue {
  const attributes: Record<string, string> = {};
  for (const [key, value] of Object.entries(queue.properties)) {
    if (key !== 'QueueName') attributes[key] = String(value);
  }
  const queueName = typeof queue.properties.QueueName === 'string' ? queue.properties.QueueName : name;
  return { ...queue, queueName, attributes };
}

/**
 * Reads infra/ and resolves it for one stage without touching any server: the table's
 * CreateTable input, the bucket name, the queues' attributes, and what is deployed but not emulated.
 */
export function planLocalResources(options: InfraOptions = {}): InfraPlan {
  validateOptions(options, OPTION_KEYS);
  const stage = options.stage ?? 'local';
  const service = options.service ?? 'tidewater';
  const dir = infraDirUrl(options.infraDir);
  const variables = { stage, service, env: options.env ?? process.env };
  const settings = readSettings(dir, variables, options.overrides);
  const conditions: Record<string, unknown> = {};
  const raw: { file: string; logicalId: string; definition: Record<string, unknown> }[] = [];
  for (const file of RESOURCE_FILES) {
    const document = resolveTree(readYaml(dir, file), file, variableLookup(file, { ...variables, settings }));
    if (!isRecord(document) || !isRecord(document.Resources))
      throw new InfraDefinitionError(file, 'has no Resources mapping');
    Object.assign(conditions, isRecord(document.Conditions) ? document.Conditions : {});
    for (const [logicalId, definition] of Object.entries(document.Resources)) {
      if (!isRecord(definition)) throw new InfraDefinitionError(file, `${logicalId} is not a mapping`);
      raw.push({ file, logicalId, definition });
    }
  }
  const context: IntrinsicContext = {
    region: options.region ?? LOCAL_REGION,
    stackName: `${service}-${stage}`,
    conditions,
    evaluatedConditions: new Map(),
    where: '',
  };
  const { resources, notEmulated } = resolveResources(raw, context);
  const single = (type: string): ResolvedResource => {
    const found = resources.filter((r) => r.type === type);
    if (found.length !== 1)
      throw new InfraDefinitionError('infra', `expected exactly one ${type}, found ${found.length}`);
    return found[0] as ResolvedResource;
  };

  const table = planTable(single('AWS::DynamoDB::Table'), 'table.yml');
  if (!table.createTable.StreamSpecification)
    throw new InfraDefinitionError('table.yml', `${table.logicalId} has no stream; the archive needs one`);

  const bucket = single('AWS::S3::Bucket');
  const bucketName =
    typeof bucket.properties.BucketName === 'string'
      ? bucket.properties.BucketName
      : localBucketName(context.stackName);

  const queues = resources
    .filter((r) => r.type === 'AWS::SQS::Queue')
    .map((queue) => planQueue(queue, String(queue.properties.QueueName)));

  return {
    stage,
    settings,
    table,
    bucket: { ...bucket, bucketName },
    queues,
    notEmulated,
  };
}

/** How planTemplateResources names things CloudFormation would name, and where it is. */
export interface TemplatePlanOptions {
  /** With the stage, the stack name `<service>-<stage>` that generated names start with. */
  service: string;
  stage: string;
  /** `AWS::Region` and the region in made-up ARNs. Default us-east-1 (DynamoDB Local's). */
  region?: string;
  /** Where the resources were read from, for error messages. Default `resources`. */
  source?: string;
}

export interface PlannedTable extends ResolvedResource {
  readonly createTable: CreateTableCommandInput;
  readonly ttlAttribute?: string;
}

export interface PlannedBucket extends ResolvedResource {
  readonly bucketName: string;
}

export interface PlannedQueue extends ResolvedResource {
  readonly queueName: string;
  readonly attributes: Record<string, string>;
}

/** Every table, bucket and queue a CloudFormation `Resources` section declares, resolved for the local servers. */
export interface TemplatePlan {
  readonly stage: string;
  readonly stackName: string;
  readonly region: string;
  readonly tables: readonly PlannedTable[];
  readonly buckets: readonly PlannedBucket[];
  readonly queues: readonly PlannedQueue[];
  /** `<LogicalId>.<Property>` (or a whole resource) that deploys but that the local servers do not emulate. */
  readonly notEmulated: readonly string[];
  /** The template's Conditions, for evaluating other intrinsics (a function's environment) later. */
  readonly conditions: Readonly<Record<string, unknown>>;
}

/** A name CloudFormation would generate (randomly); locally stable per stack, so restarts find it. */
function generatedName(stackName: string, logicalId: string, maxLength: number): string {
  return `${stackName}-${logicalId}`.slice(0, maxLength);
}

/**
 * Plans the tables, buckets and queues of a CloudFormation `Resources` section, as serverless.yml's
 * `resources:` holds it (one mapping with `Resources` / `Conditions` / `Outputs`, or a list of
 * them, serverless variables already resolved), with the same evaluation as infra/. A resource
 * without a name gets `<service>-<stage>-<LogicalId>` (lower-cased for buckets).
 */
export function planTemplateResources(resources: unknown, options: TemplatePlanOptions): TemplatePlan {
  validateOptions(options, new Set(['service', 'stage', 'region', 'source']));
  const source = options.source ?? 'resources';
  const parts =
    resources === undefined || resources === null ? [] : Array.isArray(resources) ? resources : [resources];
  const conditions: Record<string, unknown> = {};
  const raw: { file: string; logicalId: string; definition: Record<string, unknown> }[] = [];
  const seen = new Set<string>();
  parts.forEach((part, i) => {
    const where = Array.isArray(resources) ? `${source}[${i}]` : source;
    if (!isRecord(part)) throw new InfraDefinitionError(where, 'is not a mapping');
    Object.assign(conditions, isRecord(part.Conditions) ? part.Conditions : {});
    if (part.Resources === undefined) return;
    if (!isRecord(part.Resources)) throw new InfraDefinitionError(where, 'Resources is not a mapping');
    for (const [logicalId, definition] of Object.entries(part.Resources)) {
      if (!isRecord(definition)) throw new InfraDefinitionError(where, `${logicalId} is not a mapping`);
      if (seen.has(logicalId)) throw new InfraDefinitionError(where, `${logicalId} is declared twice`);
      seen.add(logicalId);
      raw.push({ file: where, logicalId, definition });
    }
  });
  const stackName = `${options.service}-${options.stage}`;
  const context: IntrinsicContext = {
    region: options.region ?? LOCAL_REGION,
    stackName,
    conditions,
    evaluatedConditions: new Map(),
    where: source,
  };
  const { resources: resolved, notEmulated } = resolveResources(raw, context);
  const ofType = (type: string) => resolved.filter((r) => r.type === type);
  return {
    stage: options.stage,
    stackName,
    region: context.region,
    tables: ofType('AWS::DynamoDB::Table').map((table) =>
      planTable(table, source, generatedName(stackName, table.logicalId, 255)),
    ),
    buckets: ofType('AWS::S3::Bucket').map((bucket) => ({
      ...bucket,
      bucketName:
        typeof bucket.properties.BucketName === 'string'
          ? bucket.properties.BucketName
          : generatedName(stackName, bucket.logicalId, 63)
              .toLowerCase()
              .replace(/[^a-z0-9.-]/g, '-'),
    })),
    queues: ofType('AWS::SQS::Queue').map((queue) => {
      const fifo = String(queue.properties.FifoQueue) === 'true';
      return planQueue(
        queue,
        `${generatedName(stackName, queue.logicalId, fifo ? 75 : 80)}${fifo ? '.fifo' : ''}`,
      );
    }),
    notEmulated,
    conditions,
  };
}

/** The template's resources on the local servers, and what `Ref` / `Fn::GetAtt` give for each. */
export interface TemplateResources {
  readonly stage: string;
  readonly stackName: string;
  readonly region: string;
  readonly tables: readonly {
    readonly logicalId: string;
    readonly name: string;
    readonly arn: string;
    /** Absent for a table without a stream. */
    readonly streamArn?: string;
    readonly ttlAttribute?: string;
  }[];
  readonly buckets: readonly { readonly logicalId: string; readonly name: string }[];
  /** Created only when an SQS client was given; otherwise listed in `notEmulated`. */
  readonly queues: readonly (LocalQueue & { readonly logicalId: string })[];
  readonly notEmulated: readonly string[];
  /** By logical id. */
  readonly refs: Readonly<Record<string, LocalResourceRef>>;
  readonly conditions: Readonly<Record<string, unknown>>;
}

/**
 * Creates (or finds) what planTemplateResources planned. Safe to call again: resources that exist
 * and match are reused; one that contradicts the plan (another key schema, stream or TTL
 * attribute) throws LocalResourceConflictError.
 */
export async function createTemplateResources(
  plan: TemplatePlan,
  clients: { dynamodb: DynamoDBClient; s3: S3Client; sqs?: SQSClient },
): Promise<TemplateResources> {
  validateOptions(clients, new Set(['dynamodb', 's3', 'sqs']));
  const { dynamodb, s3, sqs } = clients;
  const tables = await Promise.all(
    plan.tables.map(async (table) => ({
      logicalId: table.logicalId,
      ...(await ensureTable(dynamodb, table)),
    })),
  );
  await Promise.all(plan.buckets.map((bucket) => ensureBucket(s3, bucket.bucketName)));
  const queues: (LocalQueue & { logicalId: string })[] = [];
  if (sqs)
    for (const queue of plan.queues)
      queues.push({ logicalId: queue.logicalId, ...(await ensureQueue(sqs, queue)) });
  const refs: Record<string, LocalResourceRef> = {};
  for (const table of tables) {
    refs[table.logicalId] = {
      type: 'AWS::DynamoDB::Table',
      ref: table.name,
      attributes: { Arn: table.arn, ...(table.streamArn ? { StreamArn: table.streamArn } : {}) },
    };
  }
  for (const bucket of plan.buckets) refs[bucket.logicalId] = bucketRef(bucket.bucketName, plan.region);
  for (const queue of queues) {
    refs[queue.logicalId] = {
      type: 'AWS::SQS::Queue',
      ref: queue.url,
      attributes: { Arn: queue.arn, QueueName: queue.name, QueueUrl: queue.url },
    };
  }
  return {
    stage: plan.stage,
    stackName: plan.stackName,
    region: plan.region,
    tables,
    buckets: plan.buckets.map((bucket) => ({ logicalId: bucket.logicalId, name: bucket.bucketName })),
    queues,
    notEmulated: sqs ? plan.notEmulated : [...plan.notEmulated, ...plan.queues.map((q) => q.logicalId)],
    refs,
    conditions: plan.conditions,
  };
}

/** What `Ref` / `Fn::GetAtt` give for a bucket of this name. */
export function bucketRef(name: string, region: string): LocalResourceRef {
  return {
    type: 'AWS::S3::Bucket',
    ref: name,
    attributes: {
      Arn: `arn:aws:s3:::${name}`,
      DomainName: `${name}.s3.amazonaws.com`,
      RegionalDomainName: `${name}.s3.${region}.amazonaws.com`,
    },
  };
}

/**
 * Evaluates CloudFormation intrinsics in a value (a function's environment variable) against
 * local resources: Ref and Fn::GetAtt of `refs`, pseudo parameters, Fn::Sub, Fn::Join, Fn::If on
 * `conditions`. Throws InfraDefinitionError for what cannot be resolved locally.
 */
export function resolveIntrinsics(
  value: unknown,
  context: {
    refs: Readonly<Record<string, LocalResourceRef>>;
    stackName: string;
    region?: string;
    conditions?: Readonly<Record<string, unknown>>;
    where: string;
  },
): unknown {
  const resolved = evaluate(value, {
    region: context.region ?? LOCAL_REGION,
    stackName: context.stackName,
    conditions: { ...context.conditions },
    evaluatedConditions: new Map(),
    where: context.where,
    refs: context.refs,
  });
  return resolved === NO_VALUE ? undefined : resolved;
}

async function ensureTable(dynamodb: DynamoDBClient, plan: PlannedTable) {
  const name = plan.createTable.TableName as string;
  let description: TableDescription | undefined;
  try {
    description = (await dynamodb.send(new CreateTableCommand(plan.createTable))).TableDescription;
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    description = (await dynamodb.send(new DescribeTableCommand({ TableName: name }))).Table;
    const want = JSON.stringify(plan.createTable.KeySchema);
    const have = JSON.stringify(description?.KeySchema);
    if (want !== have)
      throw new LocalResourceConflictError(name, `exists with key schema ${have}, infra/ defines ${want}`);
    const viewType = description?.StreamSpecification?.StreamEnabled
      ? description.StreamSpecification.StreamViewType
      : undefined;
    if (viewType !== plan.createTable.StreamSpecification?.StreamViewType) {
      throw new LocalResourceConflictError(
        name,
        `exists with stream ${viewType ?? 'disabled'}, infra/ defines ${plan.createTable.StreamSpecification?.StreamViewType}`,
      );
    }
  }
  if (plan.ttlAttribute) {
    const current = await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: name }));
    const status = current.TimeToLiveDescription?.TimeToLiveStatus;
    const attribute = current.TimeToLiveDescription?.AttributeName;
    if (status === 'ENABLED' || status === 'ENABLING') {
      if (attribute !== plan.ttlAttribute) {
        throw new LocalResourceConflictError(
          name,
          `has TTL on "${attribute}", infra/ defines "${plan.ttlAttribute}"`,
        );
      }
    } else {
      await dynamodb.send(
        new UpdateTimeToLiveCommand({
          TableName: name,
          TimeToLiveSpecification: { Enabled: true, AttributeName: plan.ttlAttribute },
        }),
      );
    }
  }
  const arn = description?.TableArn;
  const streamArn = description?.LatestStreamArn;
  if (!arn || (plan.createTable.StreamSpecification && !streamArn))
    throw new LocalResourceConflictError(name, 'the local server returned no table or stream ARN');
  return {
    name,
    arn,
    ...(streamArn ? { streamArn } : {}),
    ...(plan.ttlAttribute ? { ttlAttribute: plan.ttlAttribute } : {}),
  };
}

async function ensureBucket(s3: S3Client, name: string): Promise<void> {
  try {
    await s3.send(new CreateBucketCommand({ Bucket: name }));
  } catch (error) {
    const code = (error as { name?: string }).name;
    // The local server is the caller's own: an existing bucket of that name is this bucket.
    if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw error;
  }
}

async function ensureQueue(sqs: SQSClient, queue: PlannedQueue): Promise<LocalQueue> {
  const created = await sqs.send(
    new CreateQueueCommand({ QueueName: queue.queueName, Attributes: queue.attributes }),
  );
  const url = created.QueueUrl;
  if (!url) throw new LocalResourceConflictError(queue.queueName, 'the SQS server returned no queue URL');
  const attributes = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  const arn = attributes.Attributes?.QueueArn;
  if (!arn) throw new LocalResourceConflictError(queue.queueName, 'the SQS server returned no queue ARN');
  return { name: queue.queueName, url, arn };
}

/**
 * Creates (or finds) the table, bucket and, given an SQS client, the queues that infra/ defines,
 * on the local servers. Safe to call again: existing resources that match are reused; ones that
 * contradict infra/ (another key schema, stream or TTL attribute) throw LocalResourceConflictError.
 */
export async function createLocalResources(options: LocalResourcesOptions): Promise<LocalResources> {
  validateOptions(options, OPTION_KEYS);
  const { dynamodb, s3, sqs, ...infraOptions } = options;
  const plan = planLocalResources(infraOptions);
  const [{ streamArn, ...table }] = await Promise.all([
    ensureTable(dynamodb, plan.table),
    ensureBucket(s3, plan.bucket.bucketName),
  ]);
  // planLocalResources refuses a table without a stream, and ensureTable one the server made without.
  if (!streamArn) throw new LocalResourceConflictError(table.name, 'has no stream');
  let queues: Record<string, LocalQueue> | undefined;
  if (sqs) {
    queues = {};
    for (const queue of plan.queues) queues[queue.logicalId] = await ensureQueue(sqs, queue);
  }
  return {
    stage: plan.stage,
    settings: plan.settings,
    table: { ...table, streamArn },
    bucket: { name: plan.bucket.bucketName, archivePrefix: plan.settings.archivePrefix },
    ...(queues ? { queues } : {}),
    notEmulated: plan.notEmulated,
  };
}
