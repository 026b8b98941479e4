import pLimit from 'p-limit';
import { defineOptions } from '../core/options.js';
import { isS3Answer } from './errors.js';
import { tenantSegment } from './partition.js';
import { restoreStates } from './restore-state.js';
import {
  type ArchiveRangeOptions,
  type ListedArchiveObject,
  listArchiveHours,
  needsRestore,
  RANGE_OPTIONS,
  resolveRange,
  restoreObject,
  type Store,
} from './store.js';

// Which objects of a range sit in GLACIER / DEEP_ARCHIVE, and asking S3 to restore them. A
// restore is asked for only where none is running or done, so running it again costs nothing
// more; a later read (readArchive, compaction, erase) finds the restored copies by HeadObject.

/** RestoreObject's retrieval tiers, fastest and dearest first (docs/archive.md has their cost). */
export const ARCHIVE_RESTORE_TIERS = ['Expedited', 'Standard', 'Bulk'] as const;

/** A retrieval tier of RestoreObject. DEEP_ARCHIVE objects take Standard or Bulk only. */
export type ArchiveRestoreTier = (typeof ARCHIVE_RESTORE_TIERS)[number];

/** The range findArchivedObjects looks in, optionally one tenant's objects. */
export interface FindArchivedObjectsOptions extends ArchiveRangeOptions {
  /**
   * Only the objects a read of this tenant fetches: its own (`tenant=` segment) and the
   * unpartitioned ones, which may hold its rows. Other tenants' objects are left out.
   */
  tenant?: string;
  /** HeadObject (and RestoreObject) requests in flight at once. Default 8. */
  concurrency?: number;
}

/** One GLACIER / DEEP_ARCHIVE object of the range and where its restore stands. */
export interface ArchivedObject {
  key: string;
  storageClass: string;
  /** Bytes, as listed: what a restore retrieves (and is charged for). */
  size: number;
  state: 'needs-restore' | 'restore-in-progress' | 'restored';
  /** When `restored`: the restored copy's expiry (ISO-8601), when S3 sent one. */
  restoredUntil?: string;
}

/** restoreArchive's options: the range, the tier and how long restored copies last. */
export interface RestoreArchiveOptions extends FindArchivedObjectsOptions {
  /** The retrieval tier: its speed and price (docs/archive.md). Expedited is refused for DEEP_ARCHIVE objects. */
  tier: ArchiveRestoreTier;
  /** Days each restored copy stays readable (S3 rounds the expiry up to the next midnight UTC). */
  days: number;
  /** List what needs a restore and request nothing. */
  dryRun?: boolean;
}

/** What restoreArchive found and did (on a dry run: would do). */
export interface RestoreArchiveReport {
  dryRun: boolean;
  tier: ArchiveRestoreTier;
  days: number;
  /** Every GLACIER / DEEP_ARCHIVE object of the range, as found before any request. */
  archived: ArchivedObject[];
  /** Restores this run asked for (202), or on a dry run would ask for. */
  requested: string[];
  /** Bytes of the objects in `requested`: what the retrieval is charged per GB for. */
  requestedBytes: number;
  /** Restores already running (found so, or answered 409 RestoreAlreadyInProgress): not asked again. */
  inProgress: string[];
  /** Objects with a readable restored copy (found so, or answered 200): not asked again. */
  restored: { key: string; until: string | undefined }[];
  /** Objects of the range that need no restore (other classes, or changed class since listed). */
  notArchived: number;
}

const FIND_OPTIONS = {
  ...RANGE_OPTIONS,
  tenant: { kind: 'string' },
  concurrency: { kind: 'integer', min: 1, max: 64, default: 8 },
} as const;

const readFind = /* @__PURE__ */ defineOptions<FindArchivedObjectsOptions>()(
  'findArchivedObjects',
  FIND_OPTIONS,
);

const readRestore = /* @__PURE__ */ defineOptions<RestoreArchiveOptions>()('restoreArchive', {
  ...FIND_OPTIONS,
  tier: { kind: 'enum', values: ARCHIVE_RESTORE_TIERS, required: true },
  days: { kind: 'integer', min: 1, max: 1_000_000, required: true },
  dryRun: { kind: 'boolean', default: false },
});

interface Found {
  store: Store;
  archived: ArchivedObject[];
  notArchived: number;
  limit: ReturnType<typeof pLimit>;
}

async function find(
  o: FindArchivedObjectsOptions & { concurrency: number },
  reader: Parameters<typeof resolveRange>[1],
): Promise<Found> {
  const range = resolveRange(o, reader);
  const segment = o.tenant === undefined ? undefined : tenantSegment(o.tenant);
  const store: Store = { client: range.client, bucket: range.bucket, signal: range.signal };
  const limit = pLimit(o.concurrency);
  const archived: ArchivedObject[] = [];
  let notArchived = 0;
  for await (const hour of listArchiveHours(range)) {
    const objects = hour.objects.filter(
      (x: ListedArchiveObject) => segment === undefined || x.tenant === undefined || x.tenant === segment,
    );
    const states = await restoreStates(store, objects, limit);
    for (const object of objects) {
      const found = states.get(object.key);
      // Not asked about: another class, which needs no restore. Asked but absent: gone since listed.
      if (!needsRestore(object.storageClass)) notArchived++;
      if (found === undefined) continue;
      if (found.state === 'not-archived') {
        notArchived++;
        continue;
      }
      archived.push({
        key: object.key,
        storageClass: object.storageClass,
        size: object.size,
        state: found.state,
        ...(found.state === 'restored' && found.until !== undefined
          ? { restoredUntil: found.until.toISOString() }
          : {}),
      });
    }
  }
  return { store, archived, notArchived, limit };
}

/**
 * The GLACIER / DEEP_ARCHIVE objects of [from, to) (optionally those a read of one tenant
 * fetches), in key order, each with its restore state from a HeadObject: what must be restored
 * before readArchive, compaction or an erase can read the range. Objects in other classes cost
 * no request beyond the listing.
 */
export async function findArchivedObjects(options: FindArchivedObjectsOptions): Promise<ArchivedObject[]> {
  return (await find(readFind(options), readFind)).archived;
}

/**
 * Asks S3 to restore (RestoreObject, at `tier`, for `days`) every GLACIER / DEEP_ARCHIVE object
 * of the range that has neither a restore running nor a restored copy. Idempotent: run again, it
 * asks for nothing new (a restore running or done is reported, not an error), so a script may
 * call it until `requested` and `inProgress` are empty, then read. `dryRun` lists and asks nothing.
 */
export async function restoreArchive(options: RestoreArchiveOptions): Promise<RestoreArchiveReport> {
  const o = readRestore(options);
  const found = await find(o, readRestore);
  const report: RestoreArchiveReport = {
    dryRun: o.dryRun,
    tier: o.tier,
    days: o.days,
    archived: found.archived,
    requested: [],
    requestedBytes: 0,
    inProgress: [],
    restored: [],
    notArchived: found.notArchived,
  };
  const toRequest = found.archived.filter((x) => x.state === 'needs-restore');
  if (o.tier === 'Expedited' && toRequest.some((x) => x.storageClass === 'DEEP_ARCHIVE'))
    throw readRestore.fail(
      'Expedited retrieval is not available for DEEP_ARCHIVE objects: use Standard or Bulk',
      'tier',
    );
  for (const object of found.archived) {
    if (object.state === 'restore-in-progress') report.inProgress.push(object.key);
    if (object.state === 'restored') report.restored.push({ key: object.key, until: object.restoredUntil });
  }
  const request = async (object: ArchivedObject) => {
    if (o.dryRun) return 'requested';
    try {
      return (await restoreObject(found.store, object.key, o)) === 200 ? 'restored' : 'requested';
    } catch (error) {
      // Changed since the HeadObject: a restore another run started, a class changed, a key gone.
      if (isS3Answer(error, 'RestoreAlreadyInProgress', 409)) return 'in-progress';
      if ((error as { name?: string }).name === 'InvalidObjectState') return 'not-archived';
      if (isS3Answer(error, 'NoSuchKey', 404)) return 'gone';
      throw error;
    }
  };
  const outcomes = await Promise.all(toRequest.map((object) => found.limit(() => request(object))));
  toRequest.forEach((object, i) => {
    const outcome = outcomes[i];
    if (outcome === 'requested') {
      report.requested.push(object.key);
      report.requestedBytes += object.size;
    } else if (outcome === 'in-progress') report.inProgress.push(object.key);
    else if (outcome === 'restored') report.restored.push({ key: object.key, until: undefined });
    else if (outcome === 'not-archived') report.notArchived++;
  });
  report.inProgress.sort();
  report.restored.sort((a, b) => (a.key < b.key ? -1 : 1));
  return report;
}
