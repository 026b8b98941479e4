// Local AWS servers: DynamoDB Local, the S3 server (s3rver with S3's rules), the SQS server, the
// Kinesis server (kinesalite), and what points code at them (clients, AWS_ENDPOINT_URL_*
// variables). Nothing here knows Lambda:
// the emulator and the config readers use these servers, never the other way round.
export type { DynamoDbLocal, DynamoDbLocalOptions } from './dynamodb-local.js';
export { LOCAL_CREDENTIALS, LOCAL_REGION, startDynamoDbLocal } from './dynamodb-local.js';
export { isLocalEndpoint } from './endpoint.js';
export { JavaMissingError, LocalServerStartError } from './errors.js';
export type { KinesisServer, KinesisServerOptions } from './kinesis-server.js';
export { localKinesisClient, startKinesisServer } from './kinesis-server.js';
export type { LocalAws, LocalAwsOptions } from './local-aws.js';
export { connectLocalAws, startLocalAws } from './local-aws.js';
export { localS3Client } from './local-s3-client.js';
export type { S3Server, S3ServerMiddleware, S3ServerOptions, S3ServerRequestContext } from './s3-server.js';
export { S3_STORAGE_CLASSES, startS3Server } from './s3-server.js';
export type { LocalSqsMessage, SqsServer } from './sqs-server.js';
export { startSqsServer } from './sqs-server.js';
// useLocalAws lives in ./vitest.js (the `tidewater/local/vitest` entry) so that importing
// tidewater/local never loads vitest.
