/**
 * The `tidewater/logging` entry point.
 * @module tidewater/logging
 */
// `tidewater/logging`: the pino logger (loads pino). The logging pieces that need no pino —
// createJsonLogger, fromPowertoolsLogger, toLogSafe, their option types — are on the package root.
export { createLogger } from './create-logger.js';

// Moved to the package root in 0.1.0 (they need no pino): kept as values that throw naming the
// root, so old imports fail with the fix in hand. REDACTED, a string, cannot throw: it is gone.
import { movedExport } from '../core/moved-export.js';

/**
 * Moved to the package root in 0.1.0.
 * @deprecated `import { createJsonLogger } from 'tidewater'`; this name goes in 0.3.0.
 */
export const createJsonLogger = /* @__PURE__ */ movedExport(
  'createJsonLogger',
  'tidewater/logging',
  "import { createJsonLogger } from 'tidewater'",
);
/**
 * Moved to the package root in 0.1.0.
 * @deprecated `import { fromPowertoolsLogger } from 'tidewater'`; this name goes in 0.3.0.
 */
export const fromPowertoolsLogger = /* @__PURE__ */ movedExport(
  'fromPowertoolsLogger',
  'tidewater/logging',
  "import { fromPowertoolsLogger } from 'tidewater'",
);
/**
 * Moved to the package root in 0.1.0.
 * @deprecated `import { toLogSafe } from 'tidewater'`; this name goes in 0.3.0.
 */
export const toLogSafe = /* @__PURE__ */ movedExport(
  'toLogSafe',
  'tidewater/logging',
  "import { toLogSafe } from 'tidewater'",
);
