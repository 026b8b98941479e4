import type { PipelineConfig } from '../pipeline/config.js';
import { createPipeline, isPipeline, type Pipeline, pipelineOf } from '../pipeline/engine.js';
import { createRecordParser, type ImageParseOptions, type RecordParser } from '../records/parse.js';
import type { Item, RecordOrigin } from '../records/types.js';
import type { DeadLetterSink } from '../sinks/types.js';

/** A backfill's own view of the user's pipeline, and what it counts that the engine does not return. */
export interface BackfillPipeline {
  readonly pipeline: Pipeline;
  /** Entries the dead-letter sink stored during this run. */
  deadLettered(): number;
}

function counting(sink: DeadLetterSink, count: { n: number }): DeadLetterSink {
  return {
    name: sink.name,
    async send(entries, context) {
      await sink.send(entries, context);
      count.n += entries.length;
    },
  };
}

/**
 * The user's pipeline — the same config object its stream handler takes, nothing in it rewritten —
 * with a parser of the backfill's own: every record carries `origin`, and keys and images are
 * unmarshalled as they are parsed (`eager`, which checks what `validate` checks), so an item a data
 * file holds malformed is dead-lettered with the eventID that names its file and line even when no
 * sink reads its image. Eager rather than validate: a backfill's sinks mostly read the images (an
 * index, a copy), and one pass that converts costs less than a checking pass and a converting one.
 */
export function backfillPipeline<T extends object = Item>(
  given: Pipeline | PipelineConfig<T>,
  origin: RecordOrigin,
): BackfillPipeline {
  return deliveryPipeline(given, (options) => createRecordParser({ ...options, eager: true, origin }));
}

/**
 * backfillPipeline with the parser made by `parser` from the pipeline's own parse options (numbers,
 * TTL heuristic): what a source whose records differ in `origin` (an archive replay, one origin per
 * object read) delivers through. The parser must check every record, as an eager one does.
 */
export function deliveryPipeline<T extends object = Item>(
  given: Pipeline | PipelineConfig<T>,
  parser: (options: ImageParseOptions) => RecordParser,
): BackfillPipeline {
  const base = isPipeline(given) ? given : createPipeline(given as PipelineConfig<T>);
  const config = base.config;
  const count = { n: 0 };
  const pipeline = pipelineOf({
    ...config,
    parse: parser(config.parseOptions ?? {}),
    // The parser checks every record already.
    checkedSinks: 0,
    deadLetter: config.deadLetter === undefined ? undefined : counting(config.deadLetter, count),
  });
  return { pipeline, deadLettered: () => count.n };
}
