/**
 * The `tidewater/idempotency` entry point.
 * @module tidewater/idempotency
 */
// `tidewater/idempotency`: side effects once per record under redelivery, on Powertools'
// idempotency utility (`@aws-lambda-powertools/idempotency`, an optional peer dependency: install
// it with its persistence layer's client to use this entry).
export * from './idempotency/index.js';
