import type { LambdaStreamRecord } from '../records/types.js';
import type { BackfillPipeline } from './backfill-pipeline.js';
import { deliverCounted } from './deliver-batch.js';
import { MAX_BATCH_CHARS } from './limits.js';

/** How far a data file's backfill has come (what backfillExportFile reports after each batch). */
export interface FileProgress {
  readonly key: string;
  line: number;
  itemsRead: number;
  delivered: number;
  deadLettered: number;
}

/** What stopped a file short: the records not done, and the failing record's error. */
export interface FileStop {
  readonly failed: number;
  readonly error: string;
}

/** How a file's batches are sent: the pipeline, its bounds, and who hears of each batch done. */
export interface FileBatchOptions {
  readonly key: string;
  readonly fromLine: number;
  readonly batchSize: number;
  readonly attempts: number;
  readonly onProgress?: ((progress: FileProgress) => void | Promise<void>) | undefined;
}

/**
 * The pending batch of one data file, with the line each record came from, and the file's progress.
 * A class rather than closures made per call: its methods are the same functions for every file,
 * so V8's optimized code for the read loop that calls them stays valid from one file to the next.
 */
export class FileBatch {
  readonly progress: FileProgress;
  #stopped: FileStop | undefined;
  #records: LambdaStreamRecord[] = [];
  #lines: number[] = [];
  #chars = 0;

  constructor(
    readonly run: BackfillPipeline,
    readonly options: FileBatchOptions,
  ) {
    this.progress = { key: options.key, line: options.fromLine, itemsRead: 0, delivered: 0, deadLettered: 0 };
  }

  /** Why the file stopped short, once a batch kept failing. */
  get stopped(): FileStop | undefined {
    return this.#stopped;
  }

  /** Records waiting to be delivered. */
  get pending(): number {
    return this.#records.length;
  }

  /** The line of the last record waiting. */
  get lastLine(): number {
    return this.#lines[this.#lines.length - 1]!;
  }

  /**
   * Adds the record read from `line` (`chars` of text); true when the batch is due: batchSize records
   * or Lambda's 6 MB, whichever comes first.
   */
  add(record: LambdaStreamRecord, line: number, chars: number): boolean {
    this.#records.push(record);
    this.#lines.push(line);
    this.progress.itemsRead++;
    this.#chars += chars;
    return this.#records.length >= this.options.batchSize || this.#chars >= MAX_BATCH_CHARS;
  }

  /** Delivers the pending batch, the file done up to `lastLine` when it all is; false when it stopped short. */
  async flush(lastLine: number): Promise<boolean> {
    const records = this.#records;
    const lines = this.#lines;
    const progress = this.progress;
    if (records.length === 0) {
      progress.line = lastLine;
      return true;
    }
    this.#records = [];
    this.#lines = [];
    this.#chars = 0;
    const outcome = await deliverCounted(this.run, records, this.options.attempts);
    progress.deadLettered += outcome.deadLettered;
    progress.delivered += outcome.delivered;
    if (outcome.error !== undefined) {
      progress.line = outcome.done === 0 ? lines[0]! - 1 : lines[outcome.done - 1]!;
      this.#stopped = { failed: records.length - outcome.done, error: outcome.error };
    } else progress.line = lastLine;
    await this.options.onProgress?.({ ...progress });
    return this.#stopped === undefined;
  }
}
