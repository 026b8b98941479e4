/**
 * The `tidewater/version-store` entry point.
 * @module tidewater/version-store
 */
// `tidewater/version-store`: the version guard's store in DynamoDB (loads @aws-sdk/client-dynamodb,
// so it stays off the package root, where versionGuard and MemoryVersionStore live).
export type { DynamoDbVersionStoreOptions } from './sinks/dynamodb-version-store.js';
export { DynamoDbVersionStore } from './sinks/dynamodb-version-store.js';
