import { defineOptions } from '../core/options.js';
import type { ClassifiedRecord } from '../records/types.js';
import type { Sink, SinkContext, SinkFailure, SinkResult } from '../sinks/types.js';
import { IDEMPOTENCY_OPTIONS, type IdempotencyOptions, idempotentRun } from './idempotent-run.js';

/** Options of idempotentSink: the idempotency settings, the name and the side effect. */
export interface IdempotentSinkOptions<R extends ClassifiedRecord> extends IdempotencyOptions {
  /** The sink's name: logs, metrics, and the scope of its idempotency records. */
  name: string;
  /** The side effect for one record (send a mail, call an API). A throw fails that record. */
  send: (record: R, context: SinkContext) => unknown;
}

const readOptions = /* @__PURE__ */ defineOptions<IdempotentSinkOptions<ClassifiedRecord>>()(
  'idempotentSink',
  {
    name: { kind: 'nonEmptyString', required: true },
    send: { kind: 'function', required: true },
    ...IDEMPOTENCY_OPTIONS,
  },
);

/**
 * A sink whose side effect runs once per record, however often Lambda delivers it: each record
 * is sent in stream order through Powertools' idempotency utility (`makeIdempotent`), so a record
 * already sent is skipped with its stored result. A record another invocation is still sending
 * (IdempotencyAlreadyInProgressError) and a record whose send threw are reported failed: the
 * pipeline retries, then stops there, and Lambda redelivers from it — by then the first attempt
 * has finished or expired. Records after the first failure are not sent in this invocation.
 */
export function idempotentSink<R extends ClassifiedRecord = ClassifiedRecord>(
  options: IdempotentSinkOptions<R>,
): Sink<R> {
  const o = readOptions(options as IdempotentSinkOptions<never>);
  const run = idempotentRun(o.name, o);
  const send = options.send;
  return {
    name: o.name,
    async write(records: readonly R[], context: SinkContext): Promise<SinkResult> {
      const failed: SinkFailure[] = [];
      for (const record of records) {
        if (failed.length !== 0) {
          // Stream order: nothing after a failed record is sent before it is.
          failed.push({
            sequenceNumber: record.sequenceNumber,
            error: new Error('an earlier record failed'),
          });
          continue;
        }
        try {
          await run(record, context, (r) => send(r, context));
        } catch (error) {
          failed.push({ sequenceNumber: record.sequenceNumber, error });
        }
      }
      return { failed };
    },
  };
}
