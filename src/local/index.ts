export { LOCAL_CREDENTIALS, LOCAL_REGION, startDynamoDbLocal } from './dynamodb-local.js';
export type { DynamoDbLocal, DynamoDbLocalOptions } from './dynamodb-local.js';
export { JavaMissingError, LocalServerStartError } from './errors.js';
export { startS3Server } from './s3-server.js';
export type { S3Server, S3ServerMiddleware, S3ServerOptions, S3ServerRequestContext } from './s3-server.js';
