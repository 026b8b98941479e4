// Moved to the kernel; re-exported while importers move to src/core.
export { assertOptions, describe } from '../core/options.js';
