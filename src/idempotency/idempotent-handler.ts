import { InvalidOptionsError } from '../core/errors.js';
import { defineOptions } from '../core/options.js';
import type { HandlerContext } from '../pipeline/config.js';
import type { ClassifiedRecord } from '../records/types.js';
import { IDEMPOTENCY_OPTIONS, type IdempotencyOptions, idempotentRun } from './idempotent-run.js';

/** Options of idempotentHandler: the idempotency settings and the scope name. */
export interface IdempotentHandlerOptions extends IdempotencyOptions {
  /** The scope of its idempotency records: keep it stable across deploys. */
  name: string;
}

const readOptions = /* @__PURE__ */ defineOptions<IdempotentHandlerOptions>()('idempotentHandler', {
  name: { kind: 'nonEmptyString', required: true },
  ...IDEMPOTENCY_OPTIONS,
});

/**
 * A kind handler (`handlers: { insert: … }`) whose body runs once per record, however often it is
 * delivered; on a redelivery it resolves with the result stored the first time. A record still in
 * progress elsewhere, or a body that throws, fails the record (the pipeline retries it).
 */
export function idempotentHandler<R extends ClassifiedRecord>(
  handler: (record: R, context: HandlerContext) => unknown,
  options: IdempotentHandlerOptions,
): (record: R, context: HandlerContext) => Promise<unknown> {
  const o = readOptions(options);
  if (typeof handler !== 'function')
    throw new InvalidOptionsError(`idempotentHandler: the handler must be a function, got ${typeof handler}`);
  const run = idempotentRun(o.name, o);
  return (record, context) => run(record, context, (r) => handler(r, context));
}
