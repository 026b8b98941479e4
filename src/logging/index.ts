export { createLogger } from './create-logger.js';
export type { JsonLogger } from './json-logger.js';
export { createJsonLogger } from './json-logger.js';
export type { LogDestination, LoggerOptions } from './logger-options.js';
export type {
  PowertoolsAdapterOptions,
  PowertoolsLoggerAdapter,
  PowertoolsLoggerLike,
} from './powertools-logger.js';
export { fromPowertoolsLogger } from './powertools-logger.js';
export type { SafeValueSettings } from './safe-value.js';
export { REDACTED, toLogSafe } from './safe-value.js';
