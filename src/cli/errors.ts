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
