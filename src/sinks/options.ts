import { keyPrefix, PREFIX_OPTION, SSE_OPTION } from '../archive/bucket-options.js';
import { type ArchiveLayout, DEFAULT_MAX_OBJECT_BYTES } from '../archive/objects.js';
import { DEFAULT_MAX_PARTITIONS_PER_BATCH, type TenantPartitioner } from '../archive/partition.js';
import { SINK_REQUEST_POLICY } from '../core/backoff.js';
import type { OptionReader } from '../core/options.js';
import { type SdkRetryStrategy, SinkRetryStrategy } from './retry-strategy.js';
import type { SinkContext } from './types.js';

// Option rules several sinks share, declared once for core/options' reader.

/** The archive layout's options: S3ArchiveSink and FileSink write the same keys and bytes. */
export interface ArchiveLayoutOptions {
  /** Key prefix (no leading/trailing slash needed). Default none. */
  prefix?: string;
  /** Upper bound of one object's NDJSON bytes before gzip; larger groups are split. Default 16 MiB. */
  maxObjectBytes?: number;
  /** The TTL attribute whose value each row carries as `ttl`. Default `ttl`. */
  ttlAttribute?: string;
  /** Table name for records whose source carried no eventSourceARN (GetRecords without streamArn). */
  table?: string;
  /**
   * Names each record's tenant: each tenant's rows go to objects of their own under
   * `tenant=<id>/`, so one tenant can be read or erased alone (`tenantFromPartitionKey()` for
   * keys that lead with the tenant id). Each distinct tenant of a batch is one more PUT.
   */
  partitionBy?: TenantPartitioner;
  /**
   * With `partitionBy`: the distinct tenants one batch may spread over. Records of further
   * tenants (in stream order) share the hour's unpartitioned object. Default 100.
   */
  maxPartitionsPerBatch?: number;
}

export const LAYOUT_OPTIONS = {
  prefix: PREFIX_OPTION,
  maxObjectBytes: { kind: 'integer', min: 1, default: DEFAULT_MAX_OBJECT_BYTES },
  ttlAttribute: { kind: 'nonEmptyString', default: 'ttl' },
  table: { kind: 'nonEmptyString' },
  partitionBy: { kind: 'function' },
  maxPartitionsPerBatch: { kind: 'integer', min: 1, max: 10_000, default: DEFAULT_MAX_PARTITIONS_PER_BATCH },
} as const;

/** The layout a sink plans its objects with, from its options as LAYOUT_OPTIONS read them. */
export function archiveLayout(o: {
  readonly prefix: string | undefined;
  readonly maxObjectBytes: number;
  readonly ttlAttribute: string;
  readonly table: string | undefined;
  readonly partitionBy: TenantPartitioner | undefined;
  readonly maxPartitionsPerBatch: number;
}): ArchiveLayout {
  return {
    prefix: keyPrefix(o.prefix),
    ttlAttribute: o.ttlAttribute,
    maxObjectBytes: o.maxObjectBytes,
    table: o.table,
    tenants:
      o.partitionBy === undefined
        ? undefined
        : { partitionBy: o.partitionBy, maxPartitions: o.maxPartitionsPerBatch },
  };
}

/**
 * A batch spread over more tenants than `maxPartitionsPerBatch`: the later tenants' records went
 * to the unpartitioned object of their hour. Nothing is lost (compaction with `partitionBy` moves
 * them to their tenants' objects later; erase and a one-tenant read need `partitionBy` meanwhile).
 */
export function warnOverflow(
  sink: string,
  records: number,
  layout: ArchiveLayout,
  context: SinkContext | undefined,
): void {
  context?.logger?.warn(
    { sink, records, maxPartitionsPerBatch: layout.tenants?.maxPartitions },
    'batch over maxPartitionsPerBatch: records of further tenants archived unpartitioned',
  );
}

/**
 * `client` (duck-typed AWS SDK v3 client), or `maxAttempts` and `retryStrategy` for the client a
 * sink builds itself.
 */
export const CLIENT_OPTIONS = {
  client: { kind: 'client' },
  maxAttempts: { kind: 'integer', min: 1, max: 20 },
  retryStrategy: {
    kind: 'object',
    expected: 'an SDK retry strategy (acquireInitialRetryToken, refreshRetryTokenForRetry, recordSuccess)',
    methods: ['acquireInitialRetryToken', 'refreshRetryTokenForRetry', 'recordSuccess'],
  },
} as const;

/** What the S3 and SQS sinks accept for their SDK client. */
export interface SinkClientOptions<C> {
  /** A client of your own; its retry configuration applies. Not allowed with `maxAttempts` or `retryStrategy`. */
  client?: C;
  /**
   * Attempts per request (first try included) for the client the sink builds; default 8. Every
   * attempt is made while errors are throttling or transient: the default strategy keeps no retry
   * quota (SinkRetryStrategy, docs/sinks.md).
   */
  maxAttempts?: number;
  /** The built client's retry strategy; default `new SinkRetryStrategy(maxAttempts)`. */
  retryStrategy?: SdkRetryStrategy;
}

/**
 * The client a sink sends with: the injected one, or `new Client({ maxAttempts, retryStrategy })`
 * made on first use (a cold start pays for an SDK client only when the sink is used), with a
 * SinkRetryStrategy of `maxAttempts` (default 8) unless a strategy is given.
 */
export function lazyClient<C>(
  options: {
    readonly client: C | undefined;
    readonly maxAttempts: number | undefined;
    readonly retryStrategy: SdkRetryStrategy | undefined;
  },
  reader: Pick<OptionReader<unknown, unknown>, 'fail'>,
  Client: new (config: { maxAttempts: number; retryStrategy: SdkRetryStrategy }) => C,
): () => C {
  const { client, maxAttempts, retryStrategy } = options;
  if (client !== undefined) {
    const set =
      maxAttempts !== undefined ? 'maxAttempts' : retryStrategy !== undefined ? 'retryStrategy' : undefined;
    if (set !== undefined) {
      throw reader.fail(
        `${set} configures the client the sink builds; set it on the injected client instead`,
        set,
      );
    }
    return () => client;
  }
  let built: C | undefined;
  return () => {
    const attempts = maxAttempts ?? SINK_REQUEST_POLICY.attempts;
    built ??= new Client({
      maxAttempts: attempts,
      retryStrategy: retryStrategy ?? new SinkRetryStrategy(attempts),
    });
    return built;
  };
}

/** The options an S3 sink is pointed at its bucket with. */
export const S3_OPTIONS = {
  bucket: { kind: 'nonEmptyString', required: true },
  ...CLIENT_OPTIONS,
  sse: SSE_OPTION,
} as const;
