// The package root: what a Lambda handler imports. Emulators live behind `tidewater/local`,
// test helpers behind `tidewater/testing`, so neither lands in a deployed bundle.

export * from './filters/index.js';
export * from './logging/index.js';
export * from './pipeline/index.js';
export * from './records/index.js';
export * from './sinks/index.js';
export * from './votes/index.js';
