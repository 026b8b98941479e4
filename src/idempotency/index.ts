export type { IdempotentHandlerOptions } from './idempotent-handler.js';
export { idempotentHandler } from './idempotent-handler.js';
export type { IdempotencyOptions } from './idempotent-run.js';
export type { IdempotentSinkOptions } from './idempotent-sink.js';
export { idempotentSink } from './idempotent-sink.js';
export type { IdempotencyKey } from './record-key.js';
