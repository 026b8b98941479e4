import type { CreateTableCommandInput, KeySchemaElement, StreamViewType } from '@aws-sdk/client-dynamodb';
import { defineOptions } from '../../core/index.js';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from '../servers/dynamodb-local.js';
import { InfraDefinitionError } from './errors.js';
import { evaluate, type IntrinsicContext, isRecord, type LocalResourceRef, NO_VALUE } from './intrinsics.js';

/**
 * A CloudFormation template's tables, buckets and queues, planned for the local servers: the
 * properties DynamoDB Local, the S3 server and the SQS server emulate, their intrinsics evaluated;
 * everything else listed as deployed but not emulated. One planner for serverless.yml's
 * `resources:` and for infra/ (which is the `resources:` of tidewater's own serverless.yml).
 */

/** One resource, with its properties resolved for the local servers. */
export interface ResolvedResource {
  readonly logicalId: string;
  readonly type: string;
  readonly properties: Readonly<Record<string, unknown>>;
}

const TABLE = 'AWS::DynamoDB::Table';
const GLOBAL_TABLE = 'AWS::DynamoDB::GlobalTable';
/** What a table and a global table both declare the same way. */
const TABLE_PROPERTIES = [
  'TableName',
  'BillingMode',
  'AttributeDefinitions',
  'KeySchema',
  'StreamSpecification',
  'TimeToLiveSpecification',
  'GlobalSecondaryIndexes',
  'LocalSecondaryIndexes',
];

// CloudFormation properties DynamoDB Local / s3rver / an SQS emulator accept, per resource type.
// Everything else is listed in `notEmulated` so nobody mistakes a local run for a security test.
const EMULATED: Record<string, ReadonlySet<string>> = {
  [TABLE]: new Set([...TABLE_PROPERTIES, 'ProvisionedThroughput', 'KinesisStreamSpecification']),
  // A global table (CDK's TableV2) is one table locally: DynamoDB Local has one region. Its
  // replica in the stack's region gives the Kinesis streaming destination; other replicas, and
  // capacity settings (auto scaling, on-demand maxima), are deployed but not emulated.
  [GLOBAL_TABLE]: new Set([...TABLE_PROPERTIES, 'Replicas']),
  // The local Kinesis server (kinesalite) has no encryption, retention or on-demand capacity:
  // a stream is its name and shards.
  'AWS::Kinesis::Stream': new Set(['Name', 'ShardCount', 'StreamModeDetails']),
  'AWS::S3::Bucket': new Set(['BucketName']),
  'AWS::SQS::Queue': new Set([
    'QueueName',
    'MessageRetentionPeriod',
    'SqsManagedSseEnabled',
    'KmsMasterKeyId',
  ]),
};

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
  /**
   * The table's Kinesis streaming destination (KinesisStreamSpecification), emulated locally by a
   * KinesisBridge reading the table's DynamoDB stream; the table gets one locally if it has none.
   */
  readonly kinesisDestination?: {
    readonly streamArn: string;
    readonly precision: 'MILLISECOND' | 'MICROSECOND';
  };
}

/** An `AWS::Kinesis::Stream`, for the local Kinesis server. */
export interface PlannedKinesisStream extends ResolvedResource {
  readonly streamName: string;
  /** ShardCount; an ON_DEMAND stream gets 1 locally (kinesalite has no on-demand mode). */
  readonly shardCount: number;
  /** `arn:aws:kinesis:<region>:<account>:stream/<name>`, as `Fn::GetAtt [Stream, Arn]` gives it. */
  readonly arn: string;
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
  /** `AWS::Kinesis::Stream`s: the local Kinesis server is started only when there is one. */
  readonly kinesisStreams: readonly PlannedKinesisStream[];
  /** `<LogicalId>.<Property>` (or a whole resource) that deploys but that the local servers do not emulate. */
  readonly notEmulated: readonly string[];
  /** The template's Conditions, for evaluating other intrinsics (a function's environment) later. */
  readonly conditions: Readonly<Record<string, unknown>>;
}

/** One mapping with `Resources` / `Conditions` / `Outputs`, and where it came from (for messages). */
export interface TemplatePart {
  readonly where: string;
  readonly document: unknown;
}

const readOptions = defineOptions<TemplatePlanOptions>()('planTemplateResources', {
  service: { kind: 'nonEmptyString', required: true },
  stage: { kind: 'nonEmptyString', required: true },
  region: { kind: 'nonEmptyString', default: LOCAL_REGION },
  source: { kind: 'nonEmptyString', default: 'resources' },
});

/** A name CloudFormation would generate (randomly); locally stable per stack, so restarts find it. */
function generatedName(stackName: string, logicalId: string, maxLength: number): string {
  return `${stackName}-${logicalId}`.slice(0, maxLength);
}

/**
 * Plans the tables, buckets and queues of a CloudFormation `Resources` section, as serverless.yml's
 * `resources:` holds it (one mapping with `Resources` / `Conditions` / `Outputs`, or a list of
 * them, serverless variables already resolved). A resource without a name gets
 * `<service>-<stage>-<LogicalId>` (lower-cased for buckets).
 */
export function planTemplateResources(resources: unknown, options: TemplatePlanOptions): TemplatePlan {
  const { source, ...names } = readOptions(options);
  const parts =
    resources === undefined || resources === null ? [] : Array.isArray(resources) ? resources : [resources];
  return planTemplateParts(
    parts.map((document, i) => ({ where: Array.isArray(resources) ? `${source}[${i}]` : source, document })),
    { ...names, source },
  );
}

/** planTemplateResources on parts that name themselves (infra/'s files). */
export function planTemplateParts(
  parts: readonly TemplatePart[],
  options: {
    service: string;
    stage: string;
    region: string;
    source: string;
    /** What `Ref` of a template parameter gives (its Default); other Refs stay errors. */
    refs?: Readonly<Record<string, LocalResourceRef>>;
  },
): TemplatePlan {
  const conditions: Record<string, unknown> = {};
  const raw: { file: string; logicalId: string; definition: Record<string, unknown> }[] = [];
  const seen = new Set<string>();
  for (const { where, document: declared } of withParameterDefaults(parts)) {
    const document = declared as Record<string, unknown>;
    Object.assign(conditions, isRecord(document.Conditions) ? document.Conditions : {});
    if (document.Resources === undefined) continue;
    if (!isRecord(document.Resources)) throw new InfraDefinitionError(where, 'Resources is not a mapping');
    for (const [logicalId, definition] of Object.entries(document.Resources)) {
      if (!isRecord(definition)) throw new InfraDefinitionError(where, `${logicalId} is not a mapping`);
      if (seen.has(logicalId)) throw new InfraDefinitionError(where, `${logicalId} is declared twice`);
      seen.add(logicalId);
      raw.push({ file: where, logicalId, definition });
    }
  }
  const stackName = `${options.service}-${options.stage}`;
  const base: IntrinsicContext = {
    region: options.region,
    stackName,
    conditions,
    evaluatedConditions: new Map(),
    where: options.source,
    ...(options.refs ? { refs: options.refs } : {}),
  };
  // A table's KinesisStreamSpecification names its stream by `Fn::GetAtt [Stream, Arn]`: the
  // streams are planned first, and what they give is in the tables' context.
  const streams = resolveResources(
    raw.filter((r) => r.definition.Type === KINESIS_STREAM),
    base,
  ).resources.map((stream) => planKinesisStream(stream, options.source, stackName, options.region));
  const context: IntrinsicContext = {
    ...base,
    refs: {
      ...options.refs,
      ...Object.fromEntries(
        streams.map((s) => [s.logicalId, { type: s.type, ref: s.streamName, attributes: { Arn: s.arn } }]),
      ),
    },
  };
  const { resources: resolved, notEmulated } = resolveResources(raw, context);
  const ofType = (type: string) => resolved.filter((r) => r.type === type);
  const tables = [
    ...ofType(TABLE),
    ...ofType(GLOBAL_TABLE).map((table) => globalTableAsTable(table, options.region, notEmulated)),
  ];
  return {
    kinesisStreams: streams,
    stage: options.stage,
    stackName,
    region: context.region,
    tables: tables.map((table) =>
      planTable(
        table,
        options.source,
        generatedName(stackName, table.logicalId, 255),
        streams.map((s) => s.arn),
      ),
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

/**
 * The parts with every `Ref` to one of their `Parameters` replaced by its Default: a stack
 * deployed without parameter values (as `serverless deploy` deploys) takes the Defaults, which
 * infra/ sets from infra/settings.yml. A parameter without a Default has no value locally.
 */
export function withParameterDefaults(parts: readonly TemplatePart[]): TemplatePart[] {
  const defaults = new Map<string, unknown>();
  for (const { where, document } of parts) {
    if (!isRecord(document)) throw new InfraDefinitionError(where, 'is not a mapping');
    if (document.Parameters === undefined) continue;
    if (!isRecord(document.Parameters)) throw new InfraDefinitionError(where, 'Parameters is not a mapping');
    for (const [name, parameter] of Object.entries(document.Parameters)) {
      if (!isRecord(parameter) || !('Default' in parameter))
        throw new InfraDefinitionError(
          where,
          `parameter ${name} has no Default: the local runtime, like a deploy without parameter values, uses Defaults`,
        );
      defaults.set(name, parameter.Default);
    }
  }
  if (defaults.size === 0) return [...parts];
  const substitute = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(substitute);
    if (!isRecord(node)) return node;
    const keys = Object.keys(node);
    if (keys.length === 1 && keys[0] === 'Ref' && defaults.has(String(node.Ref)))
      return defaults.get(String(node.Ref));
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, substitute(value)]));
  };
  return parts.map(({ where, document }) => {
    const { Parameters: _declared, ...rest } = document as Record<string, unknown>;
    return { where, document: substitute(rest) };
  });
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
    // A resource whose Condition is false is not created (the repository's Kinesis variant).
    if (
      typeof definition.Condition === 'string' &&
      evaluate(
        { 'Fn::If': [definition.Condition, true, false] },
        { ...context, where: `${file}: ${logicalId}.Condition` },
      ) === false
    )
      continue;
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

/**
 * A global table's properties as a table's: the stack region's replica (else the first) gives
 * its KinesisStreamSpecification; billing is on demand locally, whatever the capacity settings
 * (DynamoDB Local does not enforce capacity); the other replicas and the indexes' capacity
 * settings are listed as not emulated.
 */
function globalTableAsTable(
  table: ResolvedResource,
  region: string,
  notEmulated: string[],
): ResolvedResource {
  const { Replicas, BillingMode, GlobalSecondaryIndexes, ...rest } = table.properties;
  const replicas = Array.isArray(Replicas) ? Replicas.filter(isRecord) : [];
  const local = replicas.find((replica) => replica.Region === region) ?? replicas[0];
  for (const [i, replica] of replicas.entries()) {
    if (replica !== local) notEmulated.push(`${table.logicalId}.Replicas[${i}] (${String(replica.Region)})`);
    else
      for (const key of Object.keys(replica))
        if (key !== 'Region' && key !== 'KinesisStreamSpecification')
          notEmulated.push(`${table.logicalId}.Replicas[${i}].${key}`);
  }
  if (BillingMode !== undefined && BillingMode !== 'PAY_PER_REQUEST')
    notEmulated.push(`${table.logicalId}.BillingMode (${String(BillingMode)}: on demand locally)`);
  const indexes = Array.isArray(GlobalSecondaryIndexes)
    ? GlobalSecondaryIndexes.filter(isRecord).map(
        ({ WriteProvisionedThroughputSettings: _w, WriteOnDemandThroughputSettings: _d, ...index }) => index,
      )
    : undefined;
  return {
    ...table,
    properties: {
      ...rest,
      BillingMode: 'PAY_PER_REQUEST',
      ...(indexes ? { GlobalSecondaryIndexes: indexes } : {}),
      ...(local?.KinesisStreamSpecification === undefined
        ? {}
        : { KinesisStreamSpecification: local.KinesisStreamSpecification }),
    },
  };
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
  KinesisStreamSpecification?: { StreamArn?: unknown; ApproximateCreationDateTimePrecision?: unknown };
};

/** A table resource as CreateTable input, plus its TTL attribute; `name` when TableName is absent. */
function planTable(
  table: ResolvedResource,
  where: string,
  name?: string,
  kinesisStreamArns: readonly string[] = [],
): PlannedTable {
  const p = table.properties as TableProperties;
  const tableName = p.TableName ?? name;
  if (!tableName || !p.KeySchema || !p.AttributeDefinitions) {
    throw new InfraDefinitionError(
      where,
      `${table.logicalId} needs ${name ? '' : 'TableName, '}KeySchema and AttributeDefinitions`,
    );
  }
  const kinesis = p.KinesisStreamSpecification;
  const precision = kinesis?.ApproximateCreationDateTimePrecision ?? 'MILLISECOND';
  if (kinesis && !kinesisStreamArns.includes(kinesis.StreamArn as string))
    throw new InfraDefinitionError(
      `${where}: ${table.logicalId}.KinesisStreamSpecification.StreamArn`,
      `must name an AWS::Kinesis::Stream of the same resources (Fn::GetAtt [Stream, Arn]), got ${JSON.stringify(kinesis.StreamArn)}`,
    );
  if (precision !== 'MILLISECOND' && precision !== 'MICROSECOND')
    throw new InfraDefinitionError(
      `${where}: ${table.logicalId}.KinesisStreamSpecification.ApproximateCreationDateTimePrecision`,
      `must be MILLISECOND or MICROSECOND, got ${JSON.stringify(precision)}`,
    );
  // The bridge reads the table's DynamoDB stream; without one in the template it is enabled locally.
  const viewType =
    p.StreamSpecification?.StreamEnabled === false || !p.StreamSpecification?.StreamViewType
      ? kinesis
        ? 'NEW_AND_OLD_IMAGES'
        : undefined
      : p.StreamSpecification.StreamViewType;
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
    ...(kinesis ? { kinesisDestination: { streamArn: kinesis.StreamArn as string, precision } } : {}),
  };
}

const KINESIS_STREAM = 'AWS::Kinesis::Stream';

function planKinesisStream(
  stream: ResolvedResource,
  where: string,
  stackName: string,
  region: string,
): PlannedKinesisStream {
  const p = stream.properties as { Name?: unknown; ShardCount?: unknown; StreamModeDetails?: unknown };
  const mode = (p.StreamModeDetails as { StreamMode?: unknown } | undefined)?.StreamMode ?? 'PROVISIONED';
  if (mode !== 'PROVISIONED' && mode !== 'ON_DEMAND')
    throw new InfraDefinitionError(
      `${where}: ${stream.logicalId}.StreamModeDetails`,
      `StreamMode must be PROVISIONED or ON_DEMAND, got ${JSON.stringify(mode)}`,
    );
  const shards = p.ShardCount === undefined ? 1 : Number(p.ShardCount);
  if (!Number.isInteger(shards) || shards < 1 || shards > 50)
    throw new InfraDefinitionError(
      `${where}: ${stream.logicalId}.ShardCount`,
      `ShardCount must be a whole number from 1 to 50 locally, got ${JSON.stringify(p.ShardCount)}`,
    );
  const streamName = typeof p.Name === 'string' ? p.Name : generatedName(stackName, stream.logicalId, 128);
  return {
    ...stream,
    streamName,
    shardCount: shards,
    arn: `arn:aws:kinesis:${region}:${LOCAL_ACCOUNT_ID}:stream/${streamName}`,
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
