import type { Pipeline } from '../pipeline/engine.js';
import type { LambdaStreamRecord } from '../records/types.js';
import type { BackfillPipeline } from './backfill-pipeline.js';

/** How a batch went: how many of its records are done (from the first), and why the rest are not. */
export interface BatchOutcome {
  /** Records done (delivered or dead-lettered), counted from the batch's first. */
  readonly done: number;
  /** Why the record at `done` kept failing; undefined when the whole batch is done. */
  readonly error: string | undefined;
}

/**
 * Runs one batch through the pipeline as Lambda's event source mapping would with
 * ReportBatchItemFailures: after a partial failure the batch is sent again from the lowest failed
 * record (the records before it are done), up to `attempts` times in all. A sink therefore sees a
 * record at least once, never a record out of order.
 */
export async function deliverBatch(
  pipeline: Pipeline,
  records: readonly LambdaStreamRecord[],
  attempts: number,
): Promise<BatchOutcome> {
  let from = 0;
  let error: string | undefined;
  for (let attempt = 1; attempt <= attempts && from < records.length; attempt++) {
    let failedAt: number;
    try {
      const response = await pipeline.process({ Records: from === 0 ? records : records.slice(from) });
      const first = response.batchItemFailures[0];
      if (first === undefined) return { done: records.length, error: undefined };
      const at = records.findIndex((r, i) => i >= from && r.dynamodb.SequenceNumber === first.itemIdentifier);
      failedAt = at === -1 ? from : at;
      error = `record ${first.itemIdentifier} failed (the pipeline's log says why)`;
    } catch (thrown) {
      // The whole batch failed (a throwing dead-letter sink, an unreadable batch): nothing after `from` is done.
      failedAt = from;
      error = `the batch failed whole: ${thrown instanceof Error ? thrown.name : typeof thrown} (the pipeline's log says why)`;
    }
    from = failedAt;
  }
  return { done: from, error: from < records.length ? error : undefined };
}

/** A batch's outcome with the counts a report keeps: `done` split into delivered and dead-lettered. */
export interface CountedOutcome extends BatchOutcome {
  readonly delivered: number;
  readonly deadLettered: number;
}

/** deliverBatch through a backfill's pipeline, counting what its dead-letter sink stored. */
export async function deliverCounted(
  run: BackfillPipeline,
  records: readonly LambdaStreamRecord[],
  attempts: number,
): Promise<CountedOutcome> {
  const before = run.deadLettered();
  const outcome = await deliverBatch(run.pipeline, records, attempts);
  const deadLettered = run.deadLettered() - before;
  return { ...outcome, delivered: outcome.done - deadLettered, deadLettered };
}
