/**
 * The `tidewater/history` entry point.
 * @module tidewater/history
 */
// `tidewater/history`: replay an S3 archive's changes through a stream function's pipeline (loads
// the S3 client; scripts and jobs, not stream handlers).
export * from './history/index.js';
