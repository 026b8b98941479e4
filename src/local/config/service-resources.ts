import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { defineOptions } from '../../core/index.js';
import { kinesisArnStream, streamArnTable } from '../../records/stream-arn-names.js';
import type { KinesisApi } from '../emulator/kinesis-reader.js';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from '../servers/dynamodb-local.js';
import { InfraDefinitionError, ServerlessConfigError } from './errors.js';
import { bucketRef, type LocalResourceRef, resolveIntrinsics } from './intrinsics.js';
import { createTemplateResources, type TemplateResources } from './resources.js';
import type { ServerlessConfig } from './serverless-config.js';
import type { StreamFunctionSettings } from './stream-function.js';
import { planTemplateResources, type TemplatePlan } from './template.js';

/**
 * serverless.yml's `resources:` on the local servers: the tables, buckets and queues it declares,
 * created with the same CloudFormation evaluation as infra/ (src/local/resources.ts), and a
 * function's environment and stream pointed at them.
 */

/** What `Ref` / `Fn::GetAtt` in a function's settings resolve against. */
export interface ResourceReferences {
  readonly refs: Readonly<Record<string, LocalResourceRef>>;
  readonly stackName: string;
  readonly region: string;
  readonly conditions: Readonly<Record<string, unknown>>;
}

/** Options of createServiceResources: the service's config, clients and stage. */
export interface ServiceResourcesOptions {
  /** The service's serverless.yml (loadServerlessConfig), with the stage to create. */
  config: ServerlessConfig;
  dynamodb: DynamoDBClient;
  s3: S3Client;
  /** Queues are created only with a client (and an SQS server); otherwise listed as not emulated. */
  sqs?: SQSClient;
  /** The local Kinesis server's client: needed when `resources:` declares a Kinesis stream. */
  kinesis?: KinesisApi;
  /** Region in the ARNs made up locally; default us-east-1, the local servers'. */
  region?: string;
}

/** A service's resources created on the local servers, and the streams its functions read. */
export interface ServiceResources extends TemplateResources, ResourceReferences {
  /**
   * The local stream a function's stream event reads: its `arn` resolved against these resources
   * (`Fn::GetAtt: [Table, StreamArn]`, or an ARN naming one of these tables; for a Kinesis event
   * `Fn::GetAtt: [Stream, Arn]` or a stream ARN). Undefined when it names a table or Kinesis
   * stream that serverless.yml does not declare.
   */
  streamArnOf(fn: Pick<StreamFunctionSettings, 'stream'>): string | undefined;
  /**
   * A function's environment (provider.environment, then its own) as Lambda would get it, with
   * `Ref` / `Fn::GetAtt` / `Fn::Sub` pointed at these resources. Throws ServerlessConfigError
   * naming every variable that cannot be resolved locally.
   */
  environmentOf(fn: Pick<StreamFunctionSettings, 'key' | 'environment'>): Record<string, string>;
}

/** A variable of a function's environment that could not be resolved locally, and why. */
export interface UnresolvedVariable {
  name: string;
  reason: string;
}

const readPlanOptions = defineOptions<{ region?: string }>()('planServiceResources', {
  region: { kind: 'nonEmptyString' },
});
const readOptions = defineOptions<ServiceResourcesOptions>()('createServiceResources', {
  config: {
    kind: 'object',
    methods: ['get', 'service', 'stage'],
    required: true,
    expected: 'a ServerlessConfig',
  },
  dynamodb: { kind: 'client', required: true },
  s3: { kind: 'client', required: true },
  sqs: { kind: 'client' },
  kinesis: { kind: 'client' },
  region: { kind: 'nonEmptyString' },
});

/** Reads and plans serverless.yml's `resources:` for its stage, touching no server. */
export async function planServiceResources(
  config: ServerlessConfig,
  options: { region?: string } = {},
): Promise<TemplatePlan> {
  readPlanOptions(options);
  try {
    return planTemplateResources(await config.get('resources'), {
      service: await config.service(),
      stage: await config.stage(),
      region: options.region ?? LOCAL_REGION,
      source: `${config.file}: resources`,
    });
  } catch (error) {
    if (error instanceof InfraDefinitionError) throw new ServerlessConfigError(config.file, error.message);
    throw error;
  }
}

/**
 * Creates (or finds) on the local servers every table, bucket and queue that serverless.yml's
 * `resources:` declares for the config's stage. Safe to call again.
 */
export async function createServiceResources(options: ServiceResourcesOptions): Promise<ServiceResources> {
  const { config, dynamodb, s3, sqs, kinesis } = readOptions(options);
  const plan = await planServiceResources(config, options.region ? { region: options.region } : {});
  const created = await createTemplateResources(plan, {
    dynamodb,
    s3,
    ...(sqs ? { sqs } : {}),
    ...(kinesis ? { kinesis } : {}),
  });
  return serviceResources(created, (message) => new ServerlessConfigError(config.file, message));
}

/** Created resources with a function's stream and environment resolved against them; `fail` makes the error. */
export function serviceResources(
  created: TemplateResources,
  fail: (message: string) => Error,
): ServiceResources {
  return {
    ...created,
    streamArnOf: (fn) => streamArnOf(fn, created),
    environmentOf: (fn) => {
      const { values, unresolved } = resolveEnvironment(fn.environment, created);
      if (unresolved.length)
        throw fail(
          `function '${fn.key}': cannot resolve ${unresolved.map((u) => `${u.name} (${u.reason})`).join('; ')}`,
        );
      return values;
    },
  };
}

/**
 * What `Ref` / `Fn::GetAtt` would give for planned resources that were not created (a replay):
 * names as `tidewater start` creates them; a queue's URL on AWS_ENDPOINT_URL_SQS when set. A
 * table's stream ARN exists only once the table does, so it stays unresolved.
 */
export function plannedReferences(
  plan: TemplatePlan,
  options: { sqsEndpoint?: string } = {},
): ResourceReferences {
  const account = LOCAL_ACCOUNT_ID;
  const refs: Record<string, LocalResourceRef> = {};
  for (const table of plan.tables) {
    const name = table.createTable.TableName as string;
    refs[table.logicalId] = {
      type: table.type,
      ref: name,
      attributes: { Arn: `arn:aws:dynamodb:${plan.region}:${account}:table/${name}` },
    };
  }
  for (const stream of plan.kinesisStreams)
    refs[stream.logicalId] = { type: stream.type, ref: stream.streamName, attributes: { Arn: stream.arn } };
  for (const bucket of plan.buckets) refs[bucket.logicalId] = bucketRef(bucket.bucketName, plan.region);
  const sqsBase = (options.sqsEndpoint ?? `https://sqs.${plan.region}.amazonaws.com`).replace(/\/+$/, '');
  for (const queue of plan.queues) {
    const url = `${sqsBase}/${account}/${queue.queueName}`;
    refs[queue.logicalId] = {
      type: queue.type,
      ref: url,
      attributes: {
        Arn: `arn:aws:sqs:${plan.region}:${account}:${queue.queueName}`,
        QueueName: queue.queueName,
        QueueUrl: url,
      },
    };
  }
  return { refs, stackName: plan.stackName, region: plan.region, conditions: plan.conditions };
}

/**
 * A function's environment as strings: literals as serverless passes them, CloudFormation
 * intrinsics evaluated against `references`; what cannot be resolved is listed, not guessed.
 */
export function resolveEnvironment(
  environment: Readonly<Record<string, unknown>>,
  references: ResourceReferences,
): { values: Record<string, string>; unresolved: UnresolvedVariable[] } {
  const values: Record<string, string> = {};
  const unresolved: UnresolvedVariable[] = [];
  for (const [name, value] of Object.entries(environment)) {
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object') {
      values[name] = String(value);
      continue;
    }
    let resolved: unknown;
    try {
      resolved = resolveIntrinsics(value, { ...references, where: `environment ${name}` });
    } catch (error) {
      unresolved.push({ name, reason: (error as Error).message.replace(`environment ${name}: `, '') });
      continue;
    }
    if (resolved === undefined) continue;
    if (typeof resolved === 'object')
      unresolved.push({ name, reason: `${JSON.stringify(value)} is not a string` });
    else values[name] = String(resolved);
  }
  return { values, unresolved };
}

/** A stream event's `arn`, on the local server. */
export function streamArnOf(
  fn: Pick<StreamFunctionSettings, 'stream'>,
  resources: Pick<TemplateResources, 'tables' | 'kinesisStreams'> & ResourceReferences,
): string | undefined {
  const arn = fn.stream.arn;
  let text: unknown = arn;
  if (arn !== null && typeof arn === 'object') {
    try {
      text = resolveIntrinsics(arn, { ...resources, where: 'stream arn' });
    } catch {
      return undefined;
    }
  }
  if (typeof text !== 'string') return undefined;
  if (fn.stream.source === 'kinesis') {
    // An ARN written out names the local stream of that name, whatever its account and region.
    const name = kinesisArnStream(text);
    return resources.kinesisStreams.find((s) => s.arn === text || (name !== undefined && s.name === name))
      ?.arn;
  }
  const local = resources.tables.find((table) => table.streamArn === text);
  if (local) return local.streamArn;
  // An ARN written out (`arn:aws:dynamodb:…:table/orders/stream/…`): the local table of that name.
  const named = streamArnTable(text);
  return resources.tables.find((table) => table.name === named)?.streamArn;
}
