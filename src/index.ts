/**
 * The `tidewater` entry point.
 * @module tidewater
 */
// The package root: what a Lambda handler imports. It loads no AWS SDK client and no pino: each
// of those sits behind its own entry point (`tidewater/s3`, `tidewater/sqs`, `tidewater/archive`,
// `tidewater/votes`, `tidewater/logging`), so a bundle pays only for what its handler imports.
// Emulators live behind `tidewater/local`, test kits behind `tidewater/testing`.

import { movedExport } from './core/moved-export.js';

export { InvalidOptionsError, TidewaterError } from './core/errors.js';
export { MovedExportError } from './core/moved-export.js';
export * from './filters/index.js';
export type { JsonLogger } from './logging/json-logger.js';
export { createJsonLogger } from './logging/json-logger.js';
export type { LogDestination, LoggerOptions } from './logging/logger-options.js';
export type {
  PowertoolsAdapterOptions,
  PowertoolsLoggerAdapter,
  PowertoolsLoggerLike,
} from './logging/powertools-logger.js';
export { fromPowertoolsLogger } from './logging/powertools-logger.js';
export type { SafeValueSettings } from './logging/safe-value.js';
export { REDACTED, toLogSafe } from './logging/safe-value.js';
export * from './pipeline/index.js';
export * from './records/index.js';
export * from './sinks/index.js';

/**
 * Moved to the test kit in 0.2.0: `import { InjectedSinkFailure } from 'tidewater/testing'`.
 * @deprecated Import InjectedSinkFailure from 'tidewater/testing'; this name goes in 0.3.0.
 */
export const InjectedSinkFailure = /* @__PURE__ */ movedExport(
  'InjectedSinkFailure',
  'tidewater',
  "import { InjectedSinkFailure } from 'tidewater/testing'",
);
