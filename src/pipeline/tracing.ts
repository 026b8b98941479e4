import { defineOptions } from '../core/options.js';
import type { Sink } from '../sinks/types.js';
import { isMarked } from './marked.js';
import { type TracerLike, tracedSink } from './traced-sink.js';

export type { TracerLike, TraceSegmentLike, TraceSubsegmentLike } from './traced-sink.js';

// Tracing is opt-in, as kinesisSource() and validated() are: only a handler that calls
// sinkTracer() links the wrapper (traced-sink.ts). The option takes no bare Tracer: it names this call.

// Symbol.for: a sink tracer made by another copy of tidewater (a bundled handler) is still recognized.
const SINK_TRACER = Symbol.for('tidewater.sinkTracer');

/** The `tracer` option of a pipeline, made by sinkTracer(): the tracer and how it wraps a sink. */
export interface SinkTracer {
  readonly [SINK_TRACER]: true;
  readonly tracer: TracerLike;
  wrap(sink: Sink): Sink;
}

const readArguments = /* @__PURE__ */ defineOptions<{ tracer: TracerLike }>()('sinkTracer', {
  tracer: {
    kind: 'custom',
    expected: 'a Powertools Tracer (with getSegment())',
    check: isTracerLike,
    required: true,
  },
});

/**
 * The pipeline's `tracer`: `createStreamHandler({ routes, tracer: sinkTracer(tracer) })` with a
 * Powertools Tracer (or anything with its getSegment()) runs each sink write in its own
 * subsegment (traced-sink.ts). Wrapping links the tracing into the handler; a handler without it
 * carries none.
 */
export function sinkTracer(tracer: TracerLike): SinkTracer {
  readArguments({ tracer });
  return { [SINK_TRACER]: true, tracer, wrap: (sink) => tracedSink(sink, tracer) };
}

/** @internal */
export function isSinkTracer(value: unknown): value is SinkTracer {
  return isMarked(value, SINK_TRACER);
}

/** The reader rule of `tracer`: a bare Tracer is refused naming the call that takes its place. */
export const TRACER_OPTION = {
  kind: 'custom',
  expected:
    "a tracer wrapped by sinkTracer() (import { sinkTracer } from 'tidewater'; tracer: sinkTracer(tracer) " +
    'for a Powertools Tracer), which links the sink tracing into the handler',
  check: isSinkTracer,
} as const;

export function isTracerLike(value: unknown): value is TracerLike {
  return (
    value !== null && typeof value === 'object' && typeof (value as TracerLike).getSegment === 'function'
  );
}
