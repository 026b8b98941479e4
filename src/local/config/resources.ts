import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  ResourceInUseException,
  type TableDescription,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateStreamCommand, ResourceInUseException as StreamInUseException } from '@aws-sdk/client-kinesis';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { defineOptions } from '../../core/index.js';
import type { KinesisApi } from '../emulator/kinesis-reader.js';
import { LocalResourceConflictError } from './errors.js';
import { INFRA_OPTIONS, type InfraOptions, type InfraSettings, planLocalResources } from './infra.js';
import { bucketRef, type LocalResourceRef } from './intrinsics.js';
import type { PlannedKinesisStream, PlannedQueue, PlannedTable, TemplatePlan } from './template.js';

/**
 * Planned tables, buckets and queues made real on the local servers: created, or found and
 * checked against the plan, so a second run reuses them and a contradicting one fails.
 */

export interface LocalResourcesOptions extends InfraOptions {
  dynamodb: DynamoDBClient;
  s3: S3Client;
  /** When given, the queues are created too (the test run has no SQS server, so it is optional). */
  sqs?: SQSClient;
}

/** A queue created on the local SQS server: name, URL and ARN. */
export interface LocalQueue {
  readonly name: string;
  readonly url: string;
  readonly arn: string;
}

/** The tables, buckets and queues created locally for one stage. */
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

const CLIENT_OPTIONS = {
  dynamodb: { kind: 'client', required: true },
  s3: { kind: 'client', required: true },
  sqs: { kind: 'client' },
} as const;

/** The local servers' clients; `kinesis` is needed only when the plan has Kinesis streams. */
export interface TemplateClients {
  dynamodb: DynamoDBClient;
  s3: S3Client;
  sqs?: SQSClient;
  kinesis?: KinesisApi;
}

const readClients = defineOptions<TemplateClients>()('createTemplateResources', {
  ...CLIENT_OPTIONS,
  kinesis: { kind: 'client' },
});
const readLocalOptions = defineOptions<LocalResourcesOptions>()('createLocalResources', {
  ...INFRA_OPTIONS,
  ...CLIENT_OPTIONS,
});

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
    /** The table's Kinesis streaming destination, which a KinesisBridge emulates. */
    readonly kinesisDestination?: PlannedTable['kinesisDestination'];
  }[];
  /** The Kinesis streams, on the local Kinesis server. */
  readonly kinesisStreams: readonly {
    readonly logicalId: string;
    readonly name: string;
    readonly arn: string;
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
  clients: TemplateClients,
): Promise<TemplateResources> {
  const { dynamodb, s3, sqs, kinesis } = readClients(clients);
  const [first] = plan.kinesisStreams;
  if (first && !kinesis)
    throw new LocalResourceConflictError(
      first.streamName,
      'is a Kinesis stream and no Kinesis server was given: pass `kinesis: localKinesisClient(server.endpoint)` ' +
        "with `server = await startKinesisServer()` (both from 'tidewater/local'; the kinesalite package " +
        'installed) to createServiceResources, as `tidewater start` does for an app with a Kinesis stream',
    );
  for (const stream of plan.kinesisStreams) await ensureKinesisStream(kinesis as KinesisApi, stream);
  const tables = await Promise.all(
    plan.tables.map(async (table) => ({
      logicalId: table.logicalId,
      ...(await ensureTable(dynamodb, table)),
      ...(table.kinesisDestination ? { kinesisDestination: table.kinesisDestination } : {}),
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
  for (const stream of plan.kinesisStreams)
    refs[stream.logicalId] = { type: stream.type, ref: stream.streamName, attributes: { Arn: stream.arn } };
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
    kinesisStreams: plan.kinesisStreams.map((s) => ({
      logicalId: s.logicalId,
      name: s.streamName,
      arn: s.arn,
    })),
    buckets: plan.buckets.map((bucket) => ({ logicalId: bucket.logicalId, name: bucket.bucketName })),
    queues,
    notEmulated: sqs ? plan.notEmulated : [...plan.notEmulated, ...plan.queues.map((q) => q.logicalId)],
    refs,
    conditions: plan.conditions,
  };
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

async function ensureKinesisStream(kinesis: KinesisApi, stream: PlannedKinesisStream): Promise<void> {
  try {
    // The local server makes a stream ACTIVE at once (createStreamMs: 0).
    await kinesis.send(
      new CreateStreamCommand({ StreamName: stream.streamName, ShardCount: stream.shardCount }),
    );
  } catch (error) {
    // The local server is the caller's own: an existing stream of that name is this stream.
    if (!(error instanceof StreamInUseException)) throw error;
  }
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
  const { dynamodb, s3, sqs, ...infraOptions } = readLocalOptions(options);
  const plan = planLocalResources(infraOptions);
  const created = await createTemplateResources(
    { ...plan, tables: [plan.table], buckets: [plan.bucket], kinesisStreams: [], conditions: {} },
    { dynamodb, s3, ...(sqs ? { sqs } : {}) },
  );
  const [{ logicalId: _, streamArn, ...table }] = created.tables as [(typeof created.tables)[number]];
  // planLocalResources refuses a table without a stream, and ensureTable one the server made without.
  if (!streamArn) throw new LocalResourceConflictError(table.name, 'has no stream');
  return {
    stage: plan.stage,
    settings: plan.settings,
    table: { ...table, streamArn },
    bucket: { name: plan.bucket.bucketName, archivePrefix: plan.settings.archivePrefix },
    ...(sqs
      ? { queues: Object.fromEntries(created.queues.map(({ logicalId, ...queue }) => [logicalId, queue])) }
      : {}),
    notEmulated: plan.notEmulated,
  };
}
