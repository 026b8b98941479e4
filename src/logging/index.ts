export type { LoggerOptions } from './create-logger.js';
export { createLogger } from './create-logger.js';
export type { SafeValueSettings } from './safe-value.js';
export { REDACTED, toLogSafe } from './safe-value.js';
