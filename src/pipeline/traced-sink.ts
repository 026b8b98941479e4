import type { ClassifiedRecord } from '../records/types.js';
import type { Sink, SinkContext, SinkResult } from '../sinks/types.js';

/**
 * What tidewater uses of a tracer: Powertools' Tracer (`@aws-lambda-powertools/tracer` 2.x) fits
 * as it is; tidewater does not depend on it. `getSegment()` is the current X-Ray (sub)segment.
 */
export interface TracerLike {
  getSegment(): TraceSegmentLike | undefined;
  isTracingEnabled?(): boolean;
}

/** The part of an X-Ray segment sinkTracer() uses: opening a subsegment. */
export interface TraceSegmentLike {
  addNewSubsegment(name: string): TraceSubsegmentLike;
}

/** The part of an X-Ray subsegment sinkTracer() uses: annotations, errors, close. */
export interface TraceSubsegmentLike {
  addAnnotation(key: string, value: string | number | boolean): void;
  addError(error: Error): void;
  close(): void;
}

/**
 * The sink with each write in its own subsegment (`## sink <name>`), annotated with the sink's
 * name, how many records it was given and how many failed; a throw is recorded on it. Only sinks
 * of a pipeline given a sinkTracer() are wrapped, so without one nothing is paid.
 */
export function tracedSink(sink: Sink, tracer: TracerLike): Sink {
  const name = `## sink ${sink.name}`;
  const traced: Sink = {
    name: sink.name,
    ...(sink.checkedImages === undefined ? {} : { checkedImages: sink.checkedImages }),
    async write(records: readonly ClassifiedRecord[], context: SinkContext): Promise<SinkResult | undefined> {
      const parent = tracer.isTracingEnabled?.() === false ? undefined : tracer.getSegment();
      if (parent === undefined) return sink.write(records, context);
      const subsegment = parent.addNewSubsegment(name);
      subsegment.addAnnotation('sink', sink.name);
      subsegment.addAnnotation('records', records.length);
      try {
        const result = await sink.write(records, context);
        subsegment.addAnnotation('failed', result?.failed?.length ?? 0);
        return result;
      } catch (error) {
        subsegment.addAnnotation('failed', records.length);
        if (error instanceof Error) subsegment.addError(error);
        throw error;
      } finally {
        subsegment.close();
      }
    },
  };
  if (sink.flush !== undefined) traced.flush = (context) => sink.flush!(context);
  if (sink.close !== undefined) traced.close = () => sink.close!();
  return traced;
}
