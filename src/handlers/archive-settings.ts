// What the archive handler (archiveTtl) and the compaction handler (compactArchive) must agree on:
// the routes setting, where user deletes are archived, and how their S3 client retries.

import { SinkRetryStrategy } from '../sinks/retry-strategy.js';

/**
 * ARCHIVE_ROUTES: TTL deletes only; user deletes too (under `userDeletePrefix`); or the TTL
 * archive and a change log of every insert, modify and delete (under `changeLogPrefix`).
 */
export const ARCHIVE_ROUTES = ['ttl-deletes', 'all-deletes', 'every-change'] as const;

/** What the archive handler archives: TTL deletes, user deletes too, or every change too. */
export type ArchiveRoutes = (typeof ARCHIVE_ROUTES)[number];

/**
 * DEAD_LETTER_OVERFLOW_PREFIX's default: where archiveTtl puts a dead-letter entry too large for an
 * SQS message, and so where `tidewater redrive -f` lets its pointers lead.
 */
export const DEFAULT_DEAD_LETTER_OVERFLOW_PREFIX = 'dead-letter/';

/** Where `all-deletes` archives user deletes: `<prefix>user-deletes/` (`prefix` ends in `/`). */
export function userDeletePrefix(prefix: string): string {
  return `${prefix}user-deletes/`;
}

/** Where `every-change` archives the change log: `<prefix>changes/` (`prefix` ends in `/`). */
export function changeLogPrefix(prefix: string): string {
  return `${prefix}changes/`;
}

/**
 * The archive prefixes a `routes` setting writes, the TTL archive's first: what the archive
 * handler writes and the compaction handler compacts, from one place.
 */
export function archivePrefixes(routes: ArchiveRoutes, prefix: string): string[] {
  if (routes === 'all-deletes') return [prefix, userDeletePrefix(prefix)];
  if (routes === 'every-change') return [prefix, changeLogPrefix(prefix)];
  return [prefix];
}

/**
 * The deployed clients' retries: the sinks and compaction rely on the SDK for retrying S3 and SQS
 * failures and document 8 attempts; the SDK default would give 3, and its standard strategy's
 * retry quota would cut them short under sustained 5xx (SinkRetryStrategy). A strategy per client.
 */
export function clientRetry(): { maxAttempts: number; retryStrategy: SinkRetryStrategy } {
  return { maxAttempts: 8, retryStrategy: new SinkRetryStrategy(8) };
}
