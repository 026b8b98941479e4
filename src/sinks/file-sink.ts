import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { InvalidOptionsError } from '../records/errors.js';
import type { ClassifiedRecord } from '../records/types.js';
import { type ArchiveLayout, DEFAULT_MAX_OBJECT_BYTES, planArchiveObjects } from './archive-objects.js';
import { ArchiveWriteError } from './errors.js';
import { assertOptions, keyPrefix, optionalString, positiveInteger, requiredString } from './options.js';
import type { Sink, SinkContext, SinkFailure, SinkResult } from './types.js';

export interface FileSinkOptions {
  /** Root directory; keys of the S3 layout become paths under it. */
  directory: string;
  prefix?: string;
  maxObjectBytes?: number;
  ttlAttribute?: string;
  table?: string;
  name?: string;
}

const OPTIONS = ['directory', 'prefix', 'maxObjectBytes', 'ttlAttribute', 'table', 'name'] as const;
const WHERE = 'FileSink';

/**
 * The S3 archive layout on a local disk: the same keys and bytes, each file written to a temporary
 * name and renamed into place, so a reader never sees a partial file and a redelivered batch
 * replaces its file with identical content.
 */
export class FileSink implements Sink {
  readonly name: string;
  readonly directory: string;
  readonly #layout: ArchiveLayout;

  constructor(options: FileSinkOptions) {
    if (options === undefined)
      throw new InvalidOptionsError(`${WHERE}: options with a directory are required`);
    assertOptions(options, OPTIONS, WHERE);
    this.name = optionalString(options, 'name', WHERE) ?? 'file';
    this.directory = resolve(requiredString(options, 'directory', WHERE));
    this.#layout = {
      prefix: keyPrefix(options, WHERE),
      ttlAttribute: optionalString(options, 'ttlAttribute', WHERE) ?? 'ttl',
      maxObjectBytes: positiveInteger(options, 'maxObjectBytes', WHERE, DEFAULT_MAX_OBJECT_BYTES),
      table: optionalString(options, 'table', WHERE),
    };
  }

  async write(records: readonly ClassifiedRecord[], context?: SinkContext): Promise<SinkResult> {
    if (records.length === 0) return {};
    const { objects, failed } = planArchiveObjects(records, this.#layout);
    const out: SinkFailure[] = [...failed];
    for (const object of objects) {
      const path = join(this.directory, ...object.key.split('/'));
      const temp = `${path}.${randomUUID()}.tmp`;
      try {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(temp, object.body, { flush: true });
        await rename(temp, path);
      } catch (error) {
        await rm(temp, { force: true }).catch(() => undefined);
        const failure = new ArchiveWriteError(path, object.first, object.last, { cause: error });
        context?.logger?.error({ sink: this.name, path, err: failure }, 'archive file failed');
        for (const r of object.records) out.push({ sequenceNumber: r.sequenceNumber, error: failure });
      }
    }
    return out.length === 0 ? {} : { failed: out };
  }
}
