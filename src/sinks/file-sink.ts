import { join, resolve } from 'node:path';
import { type ArchiveLayout, planArchiveObjects } from '../archive/objects.js';
import { defineOptions } from '../core/options.js';
import { writeFileAtomic } from '../core/write-file-atomic.js';
import type { ClassifiedRecord } from '../records/types.js';
import { ArchiveWriteError } from './errors.js';
import { type ArchiveLayoutOptions, archiveLayout, LAYOUT_OPTIONS, warnOverflow } from './options.js';
import type { Sink, SinkContext, SinkFailure, SinkResult } from './types.js';

/** Options of FileSink: the directory and the archive layout. */
export interface FileSinkOptions extends ArchiveLayoutOptions {
  /** Root directory; keys of the S3 layout become paths under it. */
  directory: string;
  name?: string;
}

const readOptions = /* @__PURE__ */ defineOptions<FileSinkOptions>()('FileSink', {
  directory: { kind: 'nonEmptyString', required: true },
  ...LAYOUT_OPTIONS,
  name: { kind: 'nonEmptyString', default: 'file' },
});

/**
 * The S3 archive layout on a local disk: the same keys and bytes, each file written to a temporary
 * name and renamed into place, so a reader never sees a partial file and a redelivered batch
 * replaces its file with identical content.
 */
export class FileSink implements Sink {
  readonly name: string;
  /** Archived rows keep images as they arrived: the pipeline hands this sink only ones that can be read back. */
  readonly checkedImages = true;
  readonly directory: string;
  readonly #layout: ArchiveLayout;

  constructor(options: FileSinkOptions) {
    const o = readOptions(options);
    this.name = o.name;
    this.directory = resolve(o.directory);
    this.#layout = archiveLayout(o);
  }

  async write(records: readonly ClassifiedRecord[], context?: SinkContext): Promise<SinkResult> {
    if (records.length === 0) return {};
    const { objects, failed, overflow } = planArchiveObjects(records, this.#layout);
    if (overflow > 0) warnOverflow(this.name, overflow, this.#layout, context);
    const out: SinkFailure[] = [...failed];
    for (const object of objects) {
      const path = join(this.directory, ...object.key.split('/'));
      try {
        await writeFileAtomic(path, object.body, { flush: true });
      } catch (error) {
        const failure = new ArchiveWriteError(path, object.first, object.last, { cause: error });
        context?.logger?.error({ sink: this.name, path, err: failure }, 'archive file failed');
        for (const r of object.records) out.push({ sequenceNumber: r.sequenceNumber, error: failure });
      }
    }
    return out.length === 0 ? {} : { failed: out };
  }
}
