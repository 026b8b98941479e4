import { TidewaterError } from '../core/errors.js';

/**
 * A data file's backfill stopped short (a batch kept failing). Thrown so the Map's child execution
 * fails: the file counts against ToleratedFailurePercentage and is listed in FAILED_n.json, from
 * which a redrive of the Map Run runs it again (its sink is idempotent, so the done lines are harmless).
 */
export class BackfillFileIncompleteError extends TidewaterError {
  override readonly name = 'BackfillFileIncompleteError';
  constructor(
    readonly key: string,
    /** The last line done: every item up to it was delivered or dead-lettered. */
    readonly line: number,
    readonly failed: number,
    cause: string | undefined,
  ) {
    super(
      `${key}: stopped after line ${line} with ${failed} item(s) not done (${cause ?? 'no cause given'})`,
    );
  }
}
