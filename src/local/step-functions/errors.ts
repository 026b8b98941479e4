import { TidewaterError } from '../../core/errors.js';

/**
 * A part of a state machine definition the local Map runner does not emulate (docs/backfill-at-scale.md
 * lists what it runs). Named by state and field, so the definition can be read where it stops.
 */
export class UnsupportedDefinitionError extends TidewaterError {
  override readonly name = 'UnsupportedDefinitionError';
  constructor(
    readonly state: string,
    readonly field: string,
    detail: string,
  ) {
    super(`state ${JSON.stringify(state)}, field ${field}: ${detail}`);
  }
}

/**
 * What Step Functions would fail the execution with before any child ran (`States.Runtime`,
 * `States.ItemReaderFailed`): a path that the input does not hold, a manifest that cannot be read.
 */
export class MapRunError extends TidewaterError {
  override readonly name = 'MapRunError';
  constructor(
    readonly state: string,
    /** The Step Functions error name the execution would fail with. */
    readonly error: string,
    message: string,
  ) {
    super(`state ${JSON.stringify(state)}: ${error}: ${message}`);
  }
}
