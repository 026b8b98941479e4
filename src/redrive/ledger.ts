import { type RedriveRecord, recordIdentity } from './message.js';

/** A message whose records all succeeded, removed only when the run ends. */
export interface PendingRemoval {
  /** `sqs:<message id>` or `s3://<bucket>/<key>`. */
  source: string;
  records: number;
  remove(): Promise<void>;
  /**
   * Whether what is about to be removed is still what was read (an S3 object, a pointer's
   * overflow object): a dead-letter sink writes a record that fails again to the same key.
   */
  unchanged?: () => Promise<boolean>;
  /** Makes a kept SQS message visible again (at the run's end). */
  release?: () => void;
}

/**
 * What one run has redriven, by record, and what it will remove at its end. A message that holds
 * a record this run already ran is that record dead-lettered again (the function's dead-letter
 * sink writes to the queue or bucket being redriven): its source message is no success. Removal
 * waits for the end of the run so that such a message is still there to keep.
 */
export class RunLedger {
  /** Record identity → the message that redrove it. */
  readonly #redrivenBy = new Map<string, string>();
  readonly #pending = new Map<string, PendingRemoval>();

  /** The message of this run that already ran one of `records`, if any. */
  earlierSourceOf(records: readonly RedriveRecord[]): string | undefined {
    for (const record of records) {
      const source = this.#redrivenBy.get(recordIdentity(record));
      if (source !== undefined) return source;
    }
    return undefined;
  }

  /** `source`'s records were run (whatever their outcome): a later message holding one is a copy. */
  ran(source: string, records: readonly RedriveRecord[]): void {
    for (const record of records) this.#redrivenBy.set(recordIdentity(record), source);
  }

  succeeded(removal: PendingRemoval): void {
    this.#pending.set(removal.source, removal);
  }

  /** Takes back a pending removal: the message is to be kept. */
  withdraw(source: string): PendingRemoval | undefined {
    const removal = this.#pending.get(source);
    this.#pending.delete(source);
    return removal;
  }

  pending(): PendingRemoval[] {
    return [...this.#pending.values()];
  }
}
