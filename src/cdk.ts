/**
 * The `tidewater/cdk` entry point.
 * @module tidewater/cdk
 */
// `tidewater/cdk`: AWS CDK constructs for what tidewater deploys — a stream processor, the TTL
// archive with its compaction, the vote aggregator — least-privilege by construction, with their
// alarms (docs/cdk.md). Needs the optional peer dependencies aws-cdk-lib and constructs; nothing
// else in the package imports them.
export * from './cdk/index.js';
export type { ArchiveRoutes } from './handlers/archive-settings.js';
