import { TidewaterError } from '../core/errors.js';

// Errors of reading and maintaining a stored archive (tenants, buckets); the sinks' write-path
// errors are in errors.ts.

/** A tenant id that cannot name a tenant partition (empty, with a `/`, control characters, too long). */
export class InvalidTenantError extends TidewaterError {
  override name = 'InvalidTenantError';
  readonly tenant: string;
  constructor(tenant: string, detail: string) {
    const shown = tenant.length > 60 ? `${tenant.slice(0, 60)}…` : tenant;
    super(`tenant ${JSON.stringify(shown)}: ${detail}`);
    this.tenant = tenant;
  }
}

/** The archive bucket does not exist (S3 answered NoSuchBucket): a typo, or the wrong account or region. */
export class ArchiveBucketNotFoundError extends TidewaterError {
  override name = 'ArchiveBucketNotFoundError';
  readonly bucket: string;
  constructor(bucket: string, options?: { cause?: unknown }) {
    super(
      `bucket ${JSON.stringify(bucket)} does not exist (NoSuchBucket): check its name, account and region`,
      options,
    );
    this.bucket = bucket;
  }
}

/**
 * One tenant was asked for, but some objects in range hold every tenant's rows (written without
 * `partitionBy`, or by a batch over `maxPartitionsPerBatch`): only `partitionBy` can tell which
 * rows in them are the tenant's. eraseTenant throws it before changing anything; readArchive
 * before reading the hour that holds them, instead of returning part of the tenant's rows.
 */
export class UnpartitionedObjectsError extends TidewaterError {
  override name = 'UnpartitionedObjectsError';
  readonly keys: readonly string[];
  constructor(tenant: string, keys: readonly string[]) {
    super(
      `${keys.length} archive object(s) in range hold rows of every tenant (${someKeys(keys)}); ` +
        `pass partitionBy to pick tenant ${JSON.stringify(tenant)}'s rows out of them`,
    );
    this.keys = keys;
  }
}

/** The first 5 keys and, past 5, how many in all: how an error's message names many keys. */
export function someKeys(keys: readonly string[]): string {
  return keys.slice(0, 5).join(', ') + (keys.length > 5 ? `, … (${keys.length} in all)` : '');
}

/** True for S3's NoSuchBucket answer. */
export function isNoSuchBucket(error: unknown): boolean {
  const e = error as { name?: string; Code?: string } | undefined;
  return e?.name === 'NoSuchBucket' || e?.Code === 'NoSuchBucket';
}
