/**
 * The `tidewater/local` entry point.
 * @module tidewater/local
 */
// tidewater/local: everything that runs a stream function off AWS, in three rooms that depend one
// way (config → emulator → servers): local AWS servers, Lambda's event source mapping, and the
// serverless.yml / infra/ readers. Each room's index is its narrow surface.
export * from './config/index.js';
export * from './emulator/index.js';
export * from './export/index.js';
export * from './servers/index.js';
export * from './step-functions/index.js';

// Moved in 0.1.0 (the event builders and the fake context are the test kit's): kept as values that
// throw naming their new entry, so code written against the old one fails with the fix in hand.
import { movedExport } from '../core/moved-export.js';

/**
 * Moved to `tidewater/testing` in 0.1.0.
 * @deprecated `import { StreamEventBuilder } from 'tidewater/testing'`; this name goes in 0.3.0.
 */
export const StreamEventBuilder = /* @__PURE__ */ movedExport(
  'StreamEventBuilder',
  'tidewater/local',
  "import { StreamEventBuilder } from 'tidewater/testing'",
);
/**
 * Moved to `tidewater/testing` in 0.1.0.
 * @deprecated `import { streamEvents } from 'tidewater/testing'`; this name goes in 0.3.0.
 */
export const streamEvents = /* @__PURE__ */ movedExport(
  'streamEvents',
  'tidewater/local',
  "import { streamEvents } from 'tidewater/testing'",
);
/**
 * Moved to `tidewater/testing` in 0.1.0.
 * @deprecated `import { createLambdaContext } from 'tidewater/testing'`; this name goes in 0.3.0.
 */
export const createLambdaContext = /* @__PURE__ */ movedExport(
  'createLambdaContext',
  'tidewater/local',
  "import { createLambdaContext } from 'tidewater/testing'",
);
