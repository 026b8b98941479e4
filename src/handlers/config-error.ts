import { InvalidOptionsError } from '../core/errors.js';

/** A deployment setting (an environment variable) is missing or invalid. Thrown at cold start. */
export class HandlerConfigError extends InvalidOptionsError {
  override readonly name = 'HandlerConfigError';
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message, { option: variable });
  }
}
