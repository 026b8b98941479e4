import {
  PutObjectCommand,
  type PutObjectCommandInput,
  S3Client,
  type StorageClass,
} from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { type ServerSideEncryption, sseParams } from '../archive/bucket-options.js';
import { isS3Answer } from '../archive/errors.js';
import { ARCHIVE_FORMAT, ARCHIVE_STORAGE_CLASSES, type ArchiveStorageClass } from '../archive/format.js';
import { type ArchiveLayout, type PlannedObject, planArchiveObjects } from '../archive/objects.js';
import { ARCHIVE_CONFLICT_POLICY, waitBeforeRetry } from '../core/backoff.js';
import { defineOptions } from '../core/options.js';
import type { ClassifiedRecord } from '../records/types.js';
import { ArchiveWriteError } from './errors.js';
import {
  type ArchiveLayoutOptions,
  archiveLayout,
  LAYOUT_OPTIONS,
  lazyClient,
  S3_OPTIONS,
  type SinkClientOptions,
  warnOverflow,
} from './options.js';
import type { Sink, SinkContext, SinkFailure, SinkResult } from './types.js';

export type { ServerSideEncryption };

/**
 * `client`: an S3Client whose own retry configuration applies. When omitted the sink builds
 * `new S3Client({ maxAttempts, retryStrategy })` (SinkRetryStrategy unless given), which reads
 * the region and `AWS_ENDPOINT_URL_S3` from the environment.
 */
export interface S3ArchiveSinkOptions extends ArchiveLayoutOptions, SinkClientOptions<S3Client> {
  bucket: string;
  /** Default STANDARD. GLACIER / DEEP_ARCHIVE objects need a restore before readArchive can read them. */
  storageClass?: ArchiveStorageClass;
  /** Default: the bucket's default encryption (SSE-S3 on every bucket since 2023). */
  sse?: ServerSideEncryption;
  /**
   * Send `If-None-Match: *` so an existing object is never rewritten; 412 counts as written.
   * A conditional PUT answered 501 NotImplemented is sent again without the header; once such a
   * plain PUT succeeds, this sink sends plain PUTs from then on. Default true.
   */
  conditionalCreate?: boolean;
  /** Parallel PUTs per batch. Default 4. */
  concurrency?: number;
  name?: string;
}

const readOptions = /* @__PURE__ */ defineOptions<S3ArchiveSinkOptions>()('S3ArchiveSink', {
  ...S3_OPTIONS,
  ...LAYOUT_OPTIONS,
  storageClass: { kind: 'enum', values: ARCHIVE_STORAGE_CLASSES, default: 'STANDARD' },
  conditionalCreate: { kind: 'boolean', default: true },
  concurrency: { kind: 'integer', min: 1, max: 64, default: 4 },
  name: { kind: 'nonEmptyString', default: 's3-archive' },
});

/** True for S3's answer to `If-None-Match: *` when the key exists. */
function isAlreadyExists(error: unknown): boolean {
  return isS3Answer(error, 'PreconditionFailed', 412);
}

/**
 * 501 NotImplemented: the server does not implement something the request asked for. S3 before
 * August 2024 and several S3-compatible stores answer `If-None-Match` this way, but such stores
 * answer other headers they lack (a storage class, SSE-KMS) the same, so on its own it does not
 * show the conditional header was the cause. Retrying the same request cannot help.
 */
function isConditionalUnsupported(error: unknown): boolean {
  return isS3Answer(error, 'NotImplemented', 501);
}

/** 409 ConditionalRequestConflict: a concurrent conditional write of the same key is in flight. */
function isConflict(error: unknown): boolean {
  return isS3Answer(error, 'ConditionalRequestConflict', 409);
}

/** S3 asks for a retry after 409: ARCHIVE_CONFLICT_POLICY, waited by the shared schedule. */
const CONFLICT = ARCHIVE_CONFLICT_POLICY;

/**
 * Archives each batch to S3 as gzip NDJSON, one object per (table, hour, shard) group, under a
 * key derived only from the records, so a redelivered batch lands on the same key.
 */
export class S3ArchiveSink implements Sink {
  readonly name: string;
  /** Archived rows keep images as they arrived: the pipeline hands this sink only ones that can be read back. */
  readonly checkedImages = true;
  readonly #sdk: () => S3Client;
  readonly #bucket: string;
  readonly #layout: ArchiveLayout;
  readonly #baseParams: Partial<PutObjectCommandInput>;
  /**
   * Cleared once a PUT answered 501 to `If-None-Match` succeeds without it: that shows the header
   * was the cause, and the key is a function of the records, so plain PUTs rewrite the same bytes
   * and stay idempotent. Handlers build the sink once per Lambda container (module scope), so this
   * flag is shared by every invocation the container runs: a 501 whose plain retry fails too has
   * another cause and must not turn conditional creates off for all of them.
   */
  #conditional: boolean;
  readonly #concurrency: number;

  constructor(options: S3ArchiveSinkOptions) {
    const o = readOptions(options);
    this.name = o.name;
    this.#bucket = o.bucket;
    // Built on first write, not at construction: a cold start pays for the client only when used.
    this.#sdk = lazyClient(o, readOptions, S3Client);
    this.#conditional = o.conditionalCreate;
    this.#layout = archiveLayout(o);
    this.#concurrency = o.concurrency;
    this.#baseParams = {
      Bucket: this.#bucket,
      ContentType: 'application/x-ndjson',
      ContentEncoding: 'gzip',
      StorageClass: o.storageClass as StorageClass,
      ...sseParams(o.sse, readOptions.where),
    };
  }

  async write(records: readonly ClassifiedRecord[], context?: SinkContext): Promise<SinkResult> {
    if (records.length === 0) return {};
    const { objects, failed, overflow } = planArchiveObjects(records, this.#layout);
    if (overflow > 0) warnOverflow(this.name, overflow, this.#layout, context);
    const limit = pLimit(this.#concurrency);
    const results = await Promise.all(objects.map((object) => limit(() => this.#put(object, context))));
    const out: SinkFailure[] = [...failed];
    for (const result of results) if (result !== undefined) out.push(...result);
    if (out.length > 0) {
      context?.logger?.warn(
        { sink: this.name, failed: out.length, of: records.length },
        'archive objects not written',
      );
    }
    return out.length === 0 ? {} : { failed: out };
  }

  async #put(object: PlannedObject, context: SinkContext | undefined): Promise<SinkFailure[] | undefined> {
    const base: PutObjectCommandInput = {
      ...this.#baseParams,
      Bucket: this.#bucket,
      Key: object.key,
      Body: object.body,
      // Precomputed, so the SDK sends a plain x-amz-checksum-sha256 header (no aws-chunked
      // trailer) that S3 verifies and stores; servers without flexible checksums ignore it.
      ChecksumSHA256: object.sha256,
      Metadata: {
        format: ARCHIVE_FORMAT,
        'record-count': String(object.count),
        'first-sequence-number': object.first,
        'last-sequence-number': object.last,
        sha256: object.sha256,
      },
    };
    let conflicts = 0;
    let conditional = this.#conditional;
    // Set once this object is sent again without If-None-Match after a 501.
    let retriedWithoutHeader = false;
    for (;;) {
      const input: PutObjectCommandInput = conditional ? { ...base, IfNoneMatch: '*' } : base;
      try {
        await this.#sdk().send(new PutObjectCommand(input), {
          abortSignal: context?.signal,
        });
        if (retriedWithoutHeader && this.#conditional) {
          this.#conditional = false;
          context?.logger?.warn(
            { sink: this.name, bucket: this.#bucket },
            'the server does not implement If-None-Match on PUT; writing archive objects unconditionally',
          );
        }
        context?.logger?.debug(
          { sink: this.name, key: object.key, records: object.count },
          'archive object written',
        );
        return undefined;
      } catch (error) {
        // The key is a function of the records: an existing object holds these same rows.
        if (conditional && isAlreadyExists(error)) return undefined;
        if (conditional && isConditionalUnsupported(error)) {
          conditional = false;
          retriedWithoutHeader = true;
          continue;
        }
        if (isConflict(error) && ++conflicts < CONFLICT.attempts) {
          const waited = await waitBeforeRetry(CONFLICT, conflicts, context?.signal).then(
            () => true,
            () => false,
          );
          if (waited) continue;
        }
        const failure = new ArchiveWriteError(object.key, object.first, object.last, { cause: error });
        context?.logger?.error({ sink: this.name, key: object.key, err: failure }, 'archive object failed');
        return object.records.map((r) => ({ sequenceNumber: r.sequenceNumber, error: failure }));
      }
    }
  }
}
