import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { S3Client } from '@aws-sdk/client-s3';
import { defineOptions } from '../../core/index.js';
import {
  type DynamoDbLocal,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  START_TIMEOUT_OPTION,
  startDynamoDbLocal,
} from './dynamodb-local.js';
import { localS3Client } from './local-s3-client.js';
import {
  BUCKETS_OPTION,
  MIDDLEWARE_OPTION,
  type S3Server,
  type S3ServerMiddleware,
  startS3Server,
} from './s3-server.js';

/** Options of startLocalAws: data directories, buckets to create, S3 middleware, start timeout. */
export interface LocalAwsOptions {
  /** DynamoDB files directory; in memory when omitted. */
  dbPath?: string;
  /** s3rver storage directory; a temporary one (removed on stop) when omitted. */
  s3Directory?: string;
  buckets?: string[];
  s3Middleware?: S3ServerMiddleware[];
  startTimeoutMs?: number;
}

/** DynamoDB Local and the S3 server, running: their endpoints and stop(). */
export interface LocalAws {
  readonly dynamoEndpoint: string;
  readonly s3Endpoint: string;
  readonly region: string;
  readonly credentials: typeof LOCAL_CREDENTIALS;
  readonly dynamodb: DynamoDBClient;
  readonly streams: DynamoDBStreamsClient;
  readonly s3: S3Client;
  /**
   * Environment for code that builds its own SDK clients (handlers, child processes): the SDK
   * reads AWS_ENDPOINT_URL_<SERVICE>, so the same code talks to AWS when these are absent.
   */
  readonly env: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

const readOptions = defineOptions<LocalAwsOptions>()('startLocalAws', {
  dbPath: { kind: 'nonEmptyString' },
  s3Directory: { kind: 'nonEmptyString' },
  buckets: BUCKETS_OPTION,
  s3Middleware: MIDDLEWARE_OPTION,
  startTimeoutMs: START_TIMEOUT_OPTION,
});

/** Starts DynamoDB Local and the S3 server together, with clients ready to use. */
export async function startLocalAws(input: LocalAwsOptions = {}): Promise<LocalAws> {
  const options = readOptions(input);
  const started = await Promise.allSettled([
    startDynamoDbLocal({
      ...(options.dbPath ? { dbPath: options.dbPath } : {}),
      ...(options.startTimeoutMs ? { startTimeoutMs: options.startTimeoutMs } : {}),
    }),
    startS3Server({
      ...(options.s3Directory ? { directory: options.s3Directory } : {}),
      ...(options.buckets ? { buckets: options.buckets } : {}),
      ...(options.s3Middleware ? { middleware: options.s3Middleware } : {}),
    }),
  ]);
  const [dynamoResult, s3Result] = started;
  if (dynamoResult.status === 'rejected' || s3Result.status === 'rejected') {
    // Never leave one server running when the other failed.
    await Promise.all(started.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
    throw dynamoResult.status === 'rejected'
      ? dynamoResult.reason
      : (s3Result as PromiseRejectedResult).reason;
  }
  return connectLocalAws(dynamoResult.value, s3Result.value);
}

/**
 * Clients and environment for a DynamoDB Local and an S3 server already running (started here, or
 * by the caller, e.g. in Docker); `stop()` destroys the clients and calls each server's `stop`.
 */
export function connectLocalAws(
  dynamo: Pick<DynamoDbLocal, 'endpoint' | 'stop'>,
  s3Server: Pick<S3Server, 'endpoint' | 'stop'>,
): LocalAws {
  const base = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const dynamodb = new DynamoDBClient({ ...base, endpoint: dynamo.endpoint });
  const streams = new DynamoDBStreamsClient({ ...base, endpoint: dynamo.endpoint });
  const s3 = localS3Client(s3Server.endpoint);
  const env = Object.freeze({
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB_STREAMS: dynamo.endpoint,
    AWS_ENDPOINT_URL_S3: s3Server.endpoint,
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    // s3rver serves only path-style URLs; the SDK reads these too.
    AWS_S3_FORCE_PATH_STYLE: 'true',
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
  });
  let stopping: Promise<void> | undefined;
  return {
    dynamoEndpoint: dynamo.endpoint,
    s3Endpoint: s3Server.endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    dynamodb,
    streams,
    s3,
    env,
    stop() {
      stopping ??= (async () => {
        dynamodb.destroy();
        streams.destroy();
        s3.destroy();
        await Promise.all([dynamo.stop(), s3Server.stop()]);
      })();
      return stopping;
    },
  };
}
