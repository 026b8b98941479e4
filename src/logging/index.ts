// `tidewater/logging`: the pino logger (loads pino). The logging pieces that need no pino —
// createJsonLogger, fromPowertoolsLogger, toLogSafe, their option types — are on the package root.
export { createLogger } from './create-logger.js';
