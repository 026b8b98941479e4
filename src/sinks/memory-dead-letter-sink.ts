import { defineOptions } from '../core/options.js';
import { DeadLetterSendError } from './errors.js';
import type { DeadLetterEntry, DeadLetterSink, SinkContext } from './types.js';

/** Options of MemoryDeadLetterSink: its name and an injected failure rule. */
export interface MemoryDeadLetterSinkOptions {
  name?: string;
  /** Return true (or an error) to make `send` throw for these entries (tests of a failing DLQ). */
  failWhen?: (entry: DeadLetterEntry) => unknown;
}

const readOptions = /* @__PURE__ */ defineOptions<MemoryDeadLetterSinkOptions>()('MemoryDeadLetterSink', {
  name: { kind: 'nonEmptyString', default: 'memory-dead-letter' },
  failWhen: { kind: 'function' },
});

/** Keeps dead-letter entries in memory, in the order sent. For tests and local runs. */
export class MemoryDeadLetterSink implements DeadLetterSink {
  readonly name: string;
  readonly #failWhen: ((entry: DeadLetterEntry) => unknown) | undefined;
  readonly #entries: DeadLetterEntry[] = [];

  constructor(options?: MemoryDeadLetterSinkOptions) {
    const o = readOptions(options);
    this.name = o.name;
    this.#failWhen = o.failWhen;
  }

  get entries(): readonly DeadLetterEntry[] {
    return this.#entries;
  }

  clear(): void {
    this.#entries.length = 0;
  }

  async send(entries: readonly DeadLetterEntry[], _context?: SinkContext): Promise<void> {
    if (this.#failWhen !== undefined) {
      const rejected = entries.filter((entry) => {
        const verdict = this.#failWhen?.(entry);
        return verdict !== undefined && verdict !== false && verdict !== null;
      });
      if (rejected.length > 0) {
        // All or nothing, like a durable store that refused the call: nothing of this send is kept.
        throw new DeadLetterSendError(
          'failure injected by the test rule',
          rejected.map((e) => e.sequenceNumber ?? e.eventID ?? '?'),
        );
      }
    }
    this.#entries.push(...entries);
  }
}
