import { DeadLetterSendError } from './errors.js';
import { assertOptions, optionalFunction, optionalString } from './options.js';
import type { DeadLetterEntry, DeadLetterSink, SinkContext } from './types.js';

export interface MemoryDeadLetterSinkOptions {
  name?: string;
  /** Return true (or an error) to make `send` throw for these entries (tests of a failing DLQ). */
  failWhen?: (entry: DeadLetterEntry) => unknown;
}

const OPTIONS = ['name', 'failWhen'] as const;

/** Keeps dead-letter entries in memory, in the order sent. For tests and local runs. */
export class MemoryDeadLetterSink implements DeadLetterSink {
  readonly name: string;
  readonly #failWhen: ((entry: DeadLetterEntry) => unknown) | undefined;
  readonly #entries: DeadLetterEntry[] = [];

  constructor(options?: MemoryDeadLetterSinkOptions) {
    assertOptions(options, OPTIONS, 'MemoryDeadLetterSink');
    this.name = optionalString(options, 'name', 'MemoryDeadLetterSink') ?? 'memory-dead-letter';
    this.#failWhen = optionalFunction(options, 'failWhen', 'MemoryDeadLetterSink');
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
