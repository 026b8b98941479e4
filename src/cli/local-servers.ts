import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { SQSClient } from '@aws-sdk/client-sqs';
import { resolveEnvironment } from '../local/config/service-resources.js';
import {
  connectLocalAws,
  type FailureDestination,
  type LocalAws,
  type LocalQueue,
  localKinesisClient,
  S3FailureDestination,
  type ServiceResources,
  SqsFailureDestination,
  type StreamFunctionSettings,
  startDynamoDbLocal,
  startKinesisServer,
  startS3Server,
  startSqsServer,
} from '../local/index.js';

/**
 * The local servers a CLI run uses (`tidewater start`, `tidewater demo`) and the on-failure
 * destinations on them: DynamoDB Local, the S3 server and the SQS server, each started here
 * unless the user runs their own.
 */
export interface Servers {
  aws: LocalAws;
  sqs: SQSClient;
  sqsEndpoint: string;
  /** The local Kinesis server, started only for an app with a Kinesis stream. */
  kinesis?: { client: KinesisClient; endpoint: string };
  stop(): Promise<void>;
}

/** Servers already running (Docker, a test's), by endpoint. */
export interface ServerEndpoints {
  dynamodb?: string;
  s3?: string;
  sqs?: string;
}

const NOT_STOPPED = { endpoint: '', stop: async () => undefined };

/** Starts the servers not given as endpoints; on any failure stops the ones that started. */
export async function startServers(
  endpoints: ServerEndpoints = {},
  options: { kinesis?: boolean } = {},
): Promise<Servers> {
  const external = (endpoint: string) => ({ ...NOT_STOPPED, endpoint });
  const started = await Promise.allSettled([
    endpoints.dynamodb ? external(endpoints.dynamodb) : startDynamoDbLocal(),
    endpoints.s3 ? external(endpoints.s3) : startS3Server(),
    endpoints.sqs ? external(endpoints.sqs) : startSqsServer(),
    options.kinesis ? startKinesisServer() : NOT_STOPPED,
  ]);
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    // A server left listening would keep the process alive after the error (e.g. no Java).
    await Promise.all(started.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
    throw failed.reason;
  }
  const [dynamo, s3, sqsServer, kinesisServer] = started.map(
    (r) => (r as PromiseFulfilledResult<typeof NOT_STOPPED>).value,
  ) as [typeof NOT_STOPPED, typeof NOT_STOPPED, typeof NOT_STOPPED, typeof NOT_STOPPED];
  const aws = connectLocalAws(dynamo, s3);
  const sqs = new SQSClient({
    endpoint: sqsServer.endpoint,
    region: aws.region,
    credentials: aws.credentials,
  });
  const kinesis = options.kinesis
    ? { client: localKinesisClient(kinesisServer.endpoint), endpoint: kinesisServer.endpoint }
    : undefined;
  return {
    aws,
    sqs,
    sqsEndpoint: sqsServer.endpoint,
    ...(kinesis ? { kinesis } : {}),
    async stop() {
      sqs.destroy();
      kinesis?.client.destroy();
      await Promise.all([aws.stop(), sqsServer.stop(), kinesisServer.stop()]);
    },
  };
}

/** destinations.onFailure, when it names a local queue or bucket. */
export function onFailureDestination(
  fn: StreamFunctionSettings,
  resources: ServiceResources,
  servers: Servers,
): { destination?: FailureDestination; queue?: LocalQueue; note: string } {
  const target = fn.stream.onFailure;
  if (!target) return { note: 'none (Lambda drops the batch)' };
  const arn = resolveEnvironment({ arn: target.arn }, resources).values.arn;
  const queue = resources.queues.find((q) => q.arn === arn);
  if (queue)
    return {
      destination: new SqsFailureDestination(servers.sqs, queue.url),
      queue,
      note: `queue ${queue.name}`,
    };
  const bucket = resources.buckets.find((b) => `arn:aws:s3:::${b.name}` === arn);
  if (bucket)
    return {
      destination: new S3FailureDestination(servers.aws.s3, bucket.name),
      note: `bucket ${bucket.name}`,
    };
  return {
    note: `${arn ?? JSON.stringify(target.arn)} is not a local queue or bucket (discards are only logged)`,
  };
}
