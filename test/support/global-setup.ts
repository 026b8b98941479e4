import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../src/local/servers/dynamodb-local.js';
import { startS3Server } from '../../src/local/servers/s3-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    s3Endpoint: string;
  }
}

/** One DynamoDB Local and one S3 server per test run; each test makes its own table / bucket. */
export default async function setup(project: TestProject) {
  const [dynamo, s3] = await Promise.all([startDynamoDbLocal(), startS3Server()]);
  project.provide('dynamoEndpoint', dynamo.endpoint);
  project.provide('s3Endpoint', s3.endpoint);
  return async () => {
    await Promise.all([dynamo.stop(), s3.stop()]);
  };
}
