/**
 * Every error tidewater throws on purpose extends TidewaterError, so callers can tell "bad input
 * we understood" from a bug. `name` is stable (set on the prototype chain by each class), so it
 * survives serialization into dead-letter entries and logs.
 */
export class TidewaterError extends Error {
  override name = 'TidewaterError';
}

/**
 * An options object with an unknown key or a bad value: a typo must fail loudly, not be ignored.
 * `option` names the offending key (`sse.kmsKeyId` for a nested one) when one key is at fault.
 */
export class InvalidOptionsError extends TidewaterError {
  override name = 'InvalidOptionsError';
  readonly option: string | undefined;
  constructor(message: string, options?: { option?: string | undefined; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.option = options?.option;
  }
}

/**
 * A call came back with part of its work undone (a BatchWriteItem's UnprocessedItems, a
 * SendMessageBatch's failed entries): what is left is safe to send again, so the retry
 * policies treat it like throttling. `remaining` counts what is left.
 */
export class PartialFailureError extends TidewaterError {
  override name = 'PartialFailureError';
  constructor(
    readonly remaining: number,
    detail = `${remaining} item(s) left unprocessed`,
  ) {
    super(detail);
  }
}
