import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../src/local/servers/dynamodb-local.js';
import { startKinesisServer } from '../../src/local/servers/kinesis-server.js';
import { startS3Server } from '../../src/local/servers/s3-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    s3Endpoint: string;
    kinesisEndpoint: string;
  }
}

/** One DynamoDB Local, one S3 server and one Kinesis server per test run; each test makes its own table / bucket / stream. */
export default async function setup(project: TestProject) {
  const [dynamo, s3, kinesis] = await Promise.all([
    startDynamoDbLocal(),
    startS3Server(),
    startKinesisServer(),
  ]);
  project.provide('dynamoEndpoint', dynamo.endpoint);
  project.provide('s3Endpoint', s3.endpoint);
  project.provide('kinesisEndpoint', kinesis.endpoint);
  return async () => {
    await Promise.all([dynamo.stop(), s3.stop(), kinesis.stop()]);
  };
}
