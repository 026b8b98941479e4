/**
 * The `tidewater/testing` entry point.
 * @module tidewater/testing
 */
// `tidewater/testing`: what a user's test suite imports. Kept off the package root so vitest and
// the builders never reach a deployed Lambda bundle.

export type { FakeContextOptions } from './lambda/context.js';
export { createLambdaContext } from './lambda/context.js';
export type { EventBuilderOptions } from './local/emulator/events.js';
export { StreamEventBuilder, streamEvents } from './local/emulator/events.js';
// The failure a MemorySink's `fail` rule injects: a test of fault handling names it; a handler never does.
export { InjectedSinkFailure } from './sinks/errors.js';
export type { SinkTestKitCase, SinkTestKitOptions } from './sinks/testkit.js';
export { runSinkTestKit, sinkTestKitCases } from './sinks/testkit.js';
