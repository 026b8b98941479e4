import { setTimeout as sleep } from 'node:timers/promises';
import {
  PutObjectCommand,
  type PutObjectCommandInput,
  S3Client,
  type StorageClass,
} from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { InvalidOptionsError } from '../records/errors.js';
import type { ClassifiedRecord } from '../records/types.js';
import { ARCHIVE_FORMAT } from './archive-format.js';
import {
  type ArchiveLayout,
  DEFAULT_MAX_OBJECT_BYTES,
  type PlannedObject,
  planArchiveObjects,
} from './archive-objects.js';
import { ArchiveWriteError } from './errors.js';
import {
  assertOptions,
  keyPrefix,
  optionalClient,
  optionalString,
  positiveInteger,
  requiredString,
  type ServerSideEncryption,
  sseParams,
} from './options.js';
import type { Sink, SinkContext, SinkFailure, SinkResult } from './types.js';

/** The storage classes an archive may be written in, for validating configuration (e.g. environment). */
export const ARCHIVE_STORAGE_CLASSES = [
  'STANDARD',
  'STANDARD_IA',
  'GLACIER_IR',
  'GLACIER',
  'DEEP_ARCHIVE',
] as const;

export type ArchiveStorageClass = (typeof ARCHIVE_STORAGE_CLASSES)[number];

export type { ServerSideEncryption };

export interface S3ArchiveSinkOptions {
  bucket: string;
  /**
   * An S3Client. Its own retry configuration applies. When omitted the sink builds
   * `new S3Client({ maxAttempts, retryMode: 'standard' })`, which reads the region and
   * `AWS_ENDPOINT_URL_S3` from the environment.
   */
  client?: S3Client;
  /** Attempts per PUT (first try included) for the client the sink builds; default 8. Not allowed with `client`. */
  maxAttempts?: number;
  /** Key prefix (no leading/trailing slash needed). Default none. */
  prefix?: string;
  /** Default STANDARD. GLACIER / DEEP_ARCHIVE objects need a restore before readArchive can read them. */
  storageClass?: ArchiveStorageClass;
  /** Default: the bucket's default encryption (SSE-S3 on every bucket since 2023). */
  sse?: ServerSideEncryption;
  /** Upper bound of one object's NDJSON bytes before gzip; larger groups are split. Default 16 MiB. */
  maxObjectBytes?: number;
  /** The TTL attribute whose value each row carries as `ttl`. Default `ttl`. */
  ttlAttribute?: string;
  /**
   * Send `If-None-Match: *` so an existing object is never rewritten; 412 counts as written.
   * A conditional PUT answered 501 NotImplemented is sent again without the header; once such a
   * plain PUT succeeds, this sink sends plain PUTs from then on. Default true.
   */
  conditionalCreate?: boolean;
  /** Table name for records whose source carried no eventSourceARN (GetRecords without streamArn). */
  table?: string;
  /** Parallel PUTs per batch. Default 4. */
  concurrency?: number;
  name?: string;
}

const OPTIONS = [
  'bucket',
  'client',
  'maxAttempts',
  'prefix',
  'storageClass',
  'sse',
  'maxObjectBytes',
  'ttlAttribute',
  'conditionalCreate',
  'table',
  'concurrency',
  'name',
] as const;

const WHERE = 'S3ArchiveSink';

/** True for S3's answer to `If-None-Match: *` when the key exists. */
function isAlreadyExists(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  return e?.name === 'PreconditionFailed' || e?.$metadata?.httpStatusCode === 412;
}

/**
 * 501 NotImplemented: the server does not implement something the request asked for. S3 before
 * August 2024 and several S3-compatible stores answer `If-None-Match` this way, but such stores
 * answer other headers they lack (a storage class, SSE-KMS) the same, so on its own it does not
 * show the conditional header was the cause. Retrying the same request cannot help.
 */
function isConditionalUnsupported(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  return e?.name === 'NotImplemented' || e?.$metadata?.httpStatusCode === 501;
}

/** 409 ConditionalRequestConflict: a concurrent conditional write of the same key is in flight. */
function isConflict(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  return e?.name === 'ConditionalRequestConflict' || e?.$metadata?.httpStatusCode === 409;
}

const CONFLICT_ATTEMPTS = 3;
/** S3 asks for a retry after 409; the competing write of the same key usually settles within ~100 ms. */
const CONFLICT_BASE_DELAY_MS = 50;

/** Full jitter, doubling per attempt, so writers racing on one key do not collide again in step. */
export function conflictDelay(attempt: number): number {
  return Math.random() * CONFLICT_BASE_DELAY_MS * 2 ** (attempt - 1);
}

/**
 * Archives each batch to S3 as gzip NDJSON, one object per (table, hour, shard) group, under a
 * key derived only from the records, so a redelivered batch lands on the same key.
 */
export class S3ArchiveSink implements Sink {
  readonly name: string;
  // Built on first write, not at construction: a cold start pays for the client only when used.
  #client: S3Client | undefined;
  readonly #makeClient: () => S3Client;
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

  #sdk(): S3Client {
    this.#client ??= this.#makeClient();
    return this.#client;
  }

  constructor(options: S3ArchiveSinkOptions) {
    if (options === undefined) throw new InvalidOptionsError(`${WHERE}: options with a bucket are required`);
    assertOptions(options, OPTIONS, WHERE);
    this.name = optionalString(options, 'name', WHERE) ?? 's3-archive';
    this.#bucket = requiredString(options, 'bucket', WHERE);
    const client = optionalClient<S3Client>(options, WHERE);
    if (client !== undefined && options.maxAttempts !== undefined) {
      throw new InvalidOptionsError(
        `${WHERE}: maxAttempts configures the client the sink builds; set it on the injected client instead`,
      );
    }
    const maxAttempts = positiveInteger(options, 'maxAttempts', WHERE, 8, 20);
    this.#client = client;
    this.#makeClient = () => new S3Client({ maxAttempts, retryMode: 'standard' });
    const storageClass = options.storageClass ?? 'STANDARD';
    if (!(ARCHIVE_STORAGE_CLASSES as readonly string[]).includes(storageClass)) {
      throw new InvalidOptionsError(
        `${WHERE}: storageClass must be one of ${ARCHIVE_STORAGE_CLASSES.join(', ')}`,
      );
    }
    if (options.conditionalCreate !== undefined && typeof options.conditionalCreate !== 'boolean') {
      throw new InvalidOptionsError(`${WHERE}: conditionalCreate must be a boolean`);
    }
    this.#conditional = options.conditionalCreate ?? true;
    this.#layout = {
      prefix: keyPrefix(options, WHERE),
      ttlAttribute: optionalString(options, 'ttlAttribute', WHERE) ?? 'ttl',
      maxObjectBytes: positiveInteger(options, 'maxObjectBytes', WHERE, DEFAULT_MAX_OBJECT_BYTES),
      table: optionalString(options, 'table', WHERE),
    };
    this.#concurrency = positiveInteger(options, 'concurrency', WHERE, 4, 64);
    this.#baseParams = {
      Bucket: this.#bucket,
      ContentType: 'application/x-ndjson',
      ContentEncoding: 'gzip',
      StorageClass: storageClass as StorageClass,
      ...sseParams(options.sse, WHERE),
    };
  }

  async write(records: readonly ClassifiedRecord[], context?: SinkContext): Promise<SinkResult> {
    if (records.length === 0) return {};
    const { objects, failed } = planArchiveObjects(records, this.#layout);
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
        if (isConflict(error) && ++conflicts < CONFLICT_ATTEMPTS) {
          const waited = await sleep(conflictDelay(conflicts), undefined, { signal: context?.signal }).then(
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
