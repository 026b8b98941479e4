/**
 * The `tidewater/backfill` entry point.
 * @module tidewater/backfill
 */
// `tidewater/backfill`: run a stream function's pipeline over a table's existing items, from an
// export to S3 or a parallel Scan (loads the S3 and DynamoDB clients; scripts, jobs and the
// Distributed Map's child Lambda, not stream handlers).
export * from './backfill/index.js';
