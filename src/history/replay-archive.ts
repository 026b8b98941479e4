import { ArchiveRestoreRequiredError } from '../archive/errors.js';
import { type ArchiveRow, rowToLambdaRecord } from '../archive/format.js';
import type { TenantPartitioner } from '../archive/partition.js';
import { isTenantRow, type TenantSelection, tenantSelection, toRead } from '../archive/read-archive.js';
import { restoreStates } from '../archive/restore-state.js';
import {
  type ArchiveRange,
  type ArchiveRangeOptions,
  fetchArchiveObject,
  type ListedArchiveObject,
  listArchiveHours,
  RANGE_OPTIONS,
  resolveRange,
} from '../archive/store.js';
import { deliveryPipeline } from '../backfill/backfill-pipeline.js';
import { checkpointWriter } from '../backfill/checkpoint.js';
import { deliverCounted } from '../backfill/deliver-batch.js';
import { DELIVERY_OPTIONS, type DeliveryOptions } from '../backfill/options.js';
import { sha256Hex } from '../core/digest.js';
import { defineOptions } from '../core/options.js';
import type { PipelineConfig } from '../pipeline/config.js';
import type { Pipeline } from '../pipeline/engine.js';
import { type KeyIdentity, keyIdentity } from '../records/key-identity.js';
import { createRecordParser, type ImageParseOptions, type RecordParser } from '../records/parse.js';
import type { Item, LambdaStreamRecord, RecordOrigin } from '../records/types.js';
import { advancePosition, isDone, openReplayCheckpoint } from './checkpoint.js';
import { type MergeCounts, type MergeObject, mergeHour } from './merge.js';
import { keyIdentityOfGiven } from './replay-keys.js';

/** Options of replayArchive: the archive and its range, what to pick out of it, delivery and checkpoint. */
export interface ReplayArchiveOptions extends ArchiveRangeOptions, DeliveryOptions {
  /**
   * Only this tenant's changes (the decoded id, as `partitionBy` returned it when the archive was
   * written): other tenants' objects are not even fetched. A `/`, an empty id or control
   * characters: InvalidTenantError.
   */
  tenant?: string;
  /**
   * With `tenant`: picks its rows out of unpartitioned objects in range. Without it such an
   * object stops the replay before any delivery (UnpartitionedObjectsError), as readArchive does.
   */
  partitionBy?: TenantPartitioner;
  /**
   * Only the changes of these items: each key as its attributes' values (`{ pk: 'a', sk: 1.5 }`,
   * numbers as number, bigint, NumberValue or text in DynamoDB JSON `{ N: '1.50' }`). Matched by
   * value (`1.5` and `1.50` are one item), never by the text a record carries.
   */
  keys?: readonly Record<string, unknown>[];
  /** A checkpoint file: read to resume, written after each batch (mode 0600). Default: none. */
  checkpoint?: string;
  /** Compare each object's body to the SHA-256 in its metadata. Default true. */
  verifyChecksum?: boolean;
  /** List the range and check restores, deliver nothing: the report says what a run would read. */
  dryRun?: boolean;
  onProgress?: (progress: ReplayProgress) => void;
}

/** A replay's progress, after every batch. */
export interface ReplayProgress {
  readonly objects: number;
  readonly objectsTotal: number;
  readonly rows: number;
  readonly delivered: number;
  readonly hoursDone: number;
  readonly hoursTotal: number;
}

/**
 * What replayArchive did. Every row taken from an object is counted once: `rows` = `delivered` +
 * `deadLettered` + `failed` + `skippedDuplicates` + `filtered` + `alreadyDone`.
 */
export interface ReplayReport {
  /** Which archive, range, tenant and keys: the identity a checkpoint is bound to. */
  readonly source: string;
  /** Objects read, and objects in range (of the tenant, when one is given). */
  readonly objects: number;
  readonly objectsTotal: number;
  /** Rows taken from the objects read, copies included. */
  readonly rows: number;
  readonly delivered: number;
  readonly deadLettered: number;
  /** Changes not done because a batch kept failing; the replay stopped there. */
  readonly failed: number;
  /** Copies of a change already taken (pre-compaction duplicates: the same eventID again). */
  readonly skippedDuplicates: number;
  /** Rows outside [from, to), another tenant's rows of a mixed object, or another item's. */
  readonly filtered: number;
  /** Changes a previous run delivered, by the checkpoint. */
  readonly alreadyDone: number;
  /** GLACIER / DEEP_ARCHIVE objects in range not restored (a dry run lists them; a run throws). */
  readonly needRestore: readonly string[];
  readonly hoursDone: number;
  readonly hoursTotal: number;
  /** Every change in range is delivered or dead-lettered. */
  readonly complete: boolean;
  /** Why the replay stopped short: the failing record and the error, named. */
  readonly error: string | undefined;
  readonly durationMs: number;
}

const readOptions = /* @__PURE__ */ defineOptions<ReplayArchiveOptions>()('replayArchive', {
  ...RANGE_OPTIONS,
  ...DELIVERY_OPTIONS,
  tenant: { kind: 'string' },
  partitionBy: { kind: 'function' },
  keys: {
    kind: 'custom',
    expected: 'an array of keys (attribute name to value)',
    check: (v) => Array.isArray(v) && v.every((k) => k !== null && typeof k === 'object'),
  },
  checkpoint: { kind: 'nonEmptyString' },
  verifyChecksum: { kind: 'boolean', default: true },
  dryRun: { kind: 'boolean', default: false },
  onProgress: { kind: 'function' },
});

/** An object of the hour to read, and whether only the tenant's rows of it are wanted. */
interface HourObject extends MergeObject {
  readonly pick: boolean;
}

/** The hour partition's label, `YYYY-MM-DDTHH`. */
const hourLabel = (dt: string, hour: string): string => `${dt}T${hour}`;

/** What a replay is of, as text: its checkpoint is refused by any other replay. */
function sourceOf(
  r: ArchiveRange,
  tenant: TenantSelection | undefined,
  keys: readonly KeyIdentity[] | undefined,
) {
  const where = `s3://${r.bucket}/${r.prefix === '' ? '' : `${r.prefix}/`}table=${r.table}`;
  const range = `${new Date(r.fromMs).toISOString()}..${new Date(r.toMs).toISOString()}`;
  const who = tenant === undefined ? '' : ` tenant ${JSON.stringify(tenant.id)}`;
  // The keys themselves stay out of the file name's neighbour: a digest names the set.
  const items =
    keys === undefined ? '' : ` keys sha256:${sha256Hex([...keys].sort().join('\n')).slice(0, 16)}`;
  return `archive ${where} ${range}${who}${items}`;
}

/**
 * The range listed before anything is delivered: objects to read per hour (after the tenant's
 * selection), and the cold objects among them that are not restored. Hours the checkpoint has
 * done are not checked: they are not read again.
 */
async function survey(r: ArchiveRange, tenant: TenantSelection | undefined, fromHourMs: number) {
  let objectsTotal = 0;
  let hoursTotal = 0;
  const cold: ListedArchiveObject[] = [];
  for await (const hour of listArchiveHours(r)) {
    if (hour.startMs < fromHourMs) continue;
    const selected = toRead(tenant, hour.objects);
    hoursTotal++;
    objectsTotal += selected.length;
    for (const { object } of selected) if (object.storageClass !== 'STANDARD') cold.push(object);
  }
  return {
    objectsTotal,
    hoursTotal,
    needRestore: [...(await restoreStates(r, cold))]
      .filter(([, { state }]) => state === 'needs-restore' || state === 'restore-in-progress')
      .map(([key]) => key)
      .sort(),
  };
}

/** The origin a row's record carries: the object it was read from, its hour, its Kinesis position. */
function originOf(row: ArchiveRow, objectKey: string, hour: string): RecordOrigin {
  return row.kinesis === undefined
    ? { source: 'archive', objectKey, hour }
    : { source: 'archive', objectKey, hour, kinesis: row.kinesis };
}

/**
 * Replays archived changes — a TTL archive, a user-delete archive or an archive of every change,
 * whichever `prefix` holds — through a stream function's pipeline (THE config its
 * createStreamHandler takes, or the Pipeline made from it), as backfill delivers: batches of
 * `batchSize`, each a Lambda-like invocation, a partial failure retried from the failed record.
 *
 * Per item in the order the changes happened (sequence number within a shard; approximate
 * creation time across shards), each change once however many objects hold it, every record's
 * `origin` `{ source: 'archive', objectKey, hour }`. Hour by hour, each hour's objects merged
 * as they are read: memory holds the objects overlapping in each shard of one hour, not the range.
 *
 * Before anything is delivered the range is listed: a GLACIER / DEEP_ARCHIVE object not restored
 * stops the replay with ArchiveRestoreRequiredError naming every such key; a checkpoint of another
 * replay, or not a replay's, with CheckpointMismatchError / InvalidCheckpointError.
 */
export async function replayArchive<T extends object = Item>(
  config: PipelineConfig<T> | Pipeline,
  options: ReplayArchiveOptions,
): Promise<ReplayReport> {
  const started = Date.now();
  const o = readOptions(options);
  const r = resolveRange(o, readOptions);
  if (o.partitionBy !== undefined && o.tenant === undefined)
    throw readOptions.fail(
      'partitionBy picks one tenant out of mixed objects: give tenant too',
      'partitionBy',
    );
  const tenant = o.tenant === undefined ? undefined : tenantSelection(o.tenant, o.partitionBy);
  const wanted = o.keys === undefined ? undefined : keyIdentities(o.keys);
  const source = sourceOf(r, tenant, wanted === undefined ? undefined : [...wanted]);
  const checkpoint = await openReplayCheckpoint(o.checkpoint, source, r);
  const resumeMs =
    checkpoint.hour === null ? Number.NEGATIVE_INFINITY : Date.parse(`${checkpoint.hour}:00:00Z`);
  const plan = await survey(r, tenant, resumeMs);
  const counts: MergeCounts = { objects: 0, rows: 0, duplicates: 0 };
  const tally = { delivered: 0, deadLettered: 0, failed: 0, filtered: 0, alreadyDone: 0, hoursDone: 0 };
  let error: string | undefined;
  const report = (complete: boolean): ReplayReport => ({
    source,
    objects: counts.objects,
    objectsTotal: plan.objectsTotal,
    rows: counts.rows,
    delivered: tally.delivered,
    deadLettered: tally.deadLettered,
    failed: tally.failed,
    skippedDuplicates: counts.duplicates,
    filtered: tally.filtered,
    alreadyDone: tally.alreadyDone,
    needRestore: plan.needRestore,
    hoursDone: tally.hoursDone,
    hoursTotal: plan.hoursTotal,
    complete,
    error,
    durationMs: Date.now() - started,
  });
  if (o.dryRun) return report(false);
  // A finished replay reads nothing again: its objects may have gone back to cold storage since.
  if (checkpoint.complete) return report(true);
  if (plan.needRestore.length > 0) throw new ArchiveRestoreRequiredError(plan.needRestore);

  // One parser per origin, found by the raw record the engine hands back: a batch may hold rows
  // of several objects, and each record must say which it came from.
  const parserOf = new WeakMap<object, RecordParser>();
  let parseOptions: ImageParseOptions = {};
  const run = deliveryPipeline(config, (given) => {
    parseOptions = { ...given, eager: true };
    return ((raw: unknown) => (parserOf.get(raw as object) as RecordParser)(raw)) as RecordParser;
  });
  const saver = checkpointWriter(o.checkpoint, checkpoint);
  const progress = () =>
    o.onProgress?.({
      objects: counts.objects,
      objectsTotal: plan.objectsTotal,
      rows: counts.rows,
      delivered: tally.delivered,
      hoursDone: tally.hoursDone,
      hoursTotal: plan.hoursTotal,
    });

  const batch: { raw: LambdaStreamRecord; row: ArchiveRow }[] = [];
  /** Delivers the batch; false when it stopped short (the replay stops there, resumably). */
  const flush = async (): Promise<boolean> => {
    if (batch.length === 0) return true;
    const outcome = await deliverCounted(
      run,
      batch.map((b) => b.raw),
      o.attempts,
    );
    for (let i = 0; i < outcome.done; i++) {
      const { row } = batch[i] as { row: ArchiveRow };
      advancePosition(checkpoint.shards, row.shard, row.sequenceNumber, row.eventID);
    }
    tally.delivered += outcome.delivered;
    tally.deadLettered += outcome.deadLettered;
    const rest = batch.length - outcome.done;
    batch.length = 0;
    await saver.save();
    progress();
    if (outcome.error === undefined) return true;
    tally.failed += rest;
    error = outcome.error;
    return false;
  };

  for await (const hour of listArchiveHours(r)) {
    if (hour.startMs < resumeMs) continue;
    const label = hourLabel(hour.dt, hour.hour);
    if (checkpoint.hour !== label) {
      checkpoint.hour = label;
      checkpoint.shards = Object.create(null);
      await saver.save();
    }
    const objects: HourObject[] = toRead(tenant, hour.objects).map(({ object, pick }) => ({
      key: object.key,
      shard: object.shard,
      first: object.first,
      pick,
    }));
    const parsers = new Map<string, RecordParser>();
    const fetch = async (object: HourObject) =>
      (
        await fetchArchiveObject(r.client, r.bucket, object.key, {
          verify: o.verifyChecksum,
          signal: r.signal,
        })
      ).rows;
    for await (const { row, object } of mergeHour(objects, fetch, counts)) {
      const ms = row.approximateCreationDateTime * 1000;
      if (
        ms < r.fromMs ||
        ms >= r.toMs ||
        (object.pick && !isTenantRow(tenant as TenantSelection, row)) ||
        (wanted !== undefined && !wanted.has(rowKey(row) as KeyIdentity))
      ) {
        tally.filtered++;
        continue;
      }
      if (isDone(checkpoint.shards[row.shard], row.sequenceNumber, row.eventID)) {
        tally.alreadyDone++;
        continue;
      }
      const raw = rowToLambdaRecord(row);
      let parse = row.kinesis === undefined ? parsers.get(object.key) : undefined;
      if (parse === undefined) {
        parse = createRecordParser({ ...parseOptions, origin: originOf(row, object.key, label) });
        if (row.kinesis === undefined) parsers.set(object.key, parse);
      }
      parserOf.set(raw, parse);
      batch.push({ raw, row });
      if (batch.length >= o.batchSize && !(await flush())) return report(false);
    }
    if (!(await flush())) return report(false);
    tally.hoursDone++;
  }
  checkpoint.complete = true;
  await saver.save();
  progress();
  return report(true);
}

/** The identities of the keys asked for; a key that is no key fails as the option it is. */
function keyIdentities(keys: readonly Record<string, unknown>[]): Set<KeyIdentity> {
  const out = new Set<KeyIdentity>();
  keys.forEach((key, i) => {
    try {
      out.add(keyIdentityOfGiven(key));
    } catch (error) {
      throw readOptions.fail(`keys[${i}] is not a key (${(error as Error).name})`, 'keys');
    }
  });
  return out;
}

/** A row's item, by value; a row whose keys cannot be read is nobody's (filtered). */
function rowKey(row: ArchiveRow): KeyIdentity | undefined {
  try {
    return keyIdentity(row.keys);
  } catch {
    return undefined;
  }
}
