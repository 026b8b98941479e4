import { TidewaterError } from '../core/errors.js';

/** `tidewater init` cannot scaffold into this folder (it is missing, or its package.json is broken). */
export class InitError extends TidewaterError {
  override name = 'InitError';
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

/** `tidewater backfill` was pointed at a handler it cannot take the pipeline of. */
export class NotAStreamHandlerError extends TidewaterError {
  override name = 'NotAStreamHandlerError';
  constructor(readonly handler: string) {
    super(
      `${handler} is not a handler made by createStreamHandler: a backfill runs its pipeline (routes, handlers, ` +
        "sinks), so point --handler at one, or call runBackfill(config, …) from 'tidewater/backfill' in a script",
    );
  }
}
