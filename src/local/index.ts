// tidewater/local: everything that runs a stream function off AWS, in three rooms that depend one
// way (config → emulator → servers): local AWS servers, Lambda's event source mapping, and the
// serverless.yml / infra/ readers. Each room's index is its narrow surface.
export * from './config/index.js';
export * from './emulator/index.js';
export * from './export/index.js';
export * from './servers/index.js';
export * from './step-functions/index.js';
