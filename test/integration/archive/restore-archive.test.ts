import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { tenantFromPartitionKey } from '../../../src/archive/partition.js';
import {
  ArchiveRestoreRequiredError,
  compactArchive,
  eraseTenant,
  findArchivedObjects,
  readArchive,
  restoreArchive,
  restoreItems,
} from '../../../src/archive.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { createTestBucket } from '../../support/aws.js';
import { startClockedS3 } from '../../support/clocked-s3.js';
import { tenantRecords } from '../../support/tenant-records.js';
import { HOUR_10, HOUR_11, TABLE, WIDE } from './helpers.js';

// Archived objects restored before they are read, on a local S3 server whose clock the test
// moves: restores are in progress, then done, without waiting.
const PREFIX = 'archive';
const DELAY = 3_600_000;
const partitionBy = tenantFromPartitionKey();
const TENANTS = ['acme', 'globex'];
/** Hour 10 in GLACIER (two overlapping batches per tenant), hour 11 in STANDARD. */
const cold = tenantRecords(40, TENANTS, { firstTime: HOUR_10 / 1000, spacingSeconds: 30 });
const warm = tenantRecords(20, TENANTS, { start: 40, firstTime: HOUR_11 / 1000, spacingSeconds: 30 });

const START = Date.UTC(2026, 5, 1);
const local = await startClockedS3(DELAY, START);
const { s3, clock } = local;
afterAll(() => local.stop());
beforeEach(() => {
  clock.now = START;
});

async function archive(storageClass: 'GLACIER' | 'DEEP_ARCHIVE' = 'GLACIER'): Promise<string> {
  const bucket = await createTestBucket(s3);
  const glacier = new S3ArchiveSink({ client: s3, bucket, prefix: PREFIX, partitionBy, storageClass });
  expect(await glacier.write(cold.slice(0, 30), {})).toEqual({});
  expect(await glacier.write(cold.slice(10, 40), {})).toEqual({});
  const standard = new S3ArchiveSink({ client: s3, bucket, prefix: PREFIX, partitionBy });
  expect(await standard.write(warm, {})).toEqual({});
  return bucket;
}

const range = (bucket: string) => ({ client: s3, bucket, table: TABLE, prefix: PREFIX, ...WIDE });

async function readAll(bucket: string): Promise<string[]> {
  const out: string[] = [];
  for await (const record of readArchive(range(bucket))) out.push(record.eventID);
  return out;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('restoring GLACIER / DEEP_ARCHIVE archive objects before reading them', () => {
  it('lists exactly the archived objects, reads none until restored, restores once however often run, then reads and compacts', async () => {
    const bucket = await archive();
    const archived = await findArchivedObjects(range(bucket));
    // Two batches for each of two tenants in hour 10; hour 11 is STANDARD.
    expect(archived).toHaveLength(4);
    expect(archived.every((x) => x.key.includes('/hour=10/') && x.storageClass === 'GLACIER')).toBe(true);
    expect(archived.map((x) => x.state)).toEqual(Array(4).fill('needs-restore'));
    const keys = archived.map((x) => x.key);

    // Every reader names the keys, never S3's own error.
    const read = await failure(readAll(bucket));
    expect(read).toBeInstanceOf(ArchiveRestoreRequiredError);
    expect((read as ArchiveRestoreRequiredError).keys).toEqual(keys);
    const restoring = restoreItems({ tableName: 'unused', records: readArchive(range(bucket)) });
    await expect(restoring).rejects.toMatchObject({ name: 'ArchiveRestoreRequiredError', keys });
    const compaction = compactArchive({ ...range(bucket), from: HOUR_10, to: HOUR_11 });
    await expect(compaction).rejects.toMatchObject({ name: 'ArchiveRestoreRequiredError', keys });
    // `restored: true` skips the check; the refused read is still the typed error.
    const vouched = compactArchive({ ...range(bucket), from: HOUR_10, to: HOUR_11, restored: true });
    await expect(vouched).rejects.toBeInstanceOf(ArchiveRestoreRequiredError);

    const dry = await restoreArchive({ ...range(bucket), tier: 'Bulk', days: 3, dryRun: true });
    expect(dry).toMatchObject({
      dryRun: true,
      requested: keys,
      inProgress: [],
      restored: [],
      notArchived: 2,
    });
    expect(dry.requestedBytes).toBe(archived.reduce((sum, x) => sum + x.size, 0));
    expect((await findArchivedObjects(range(bucket))).map((x) => x.state)).toEqual(
      Array(4).fill('needs-restore'),
    );

    const first = await restoreArchive({ ...range(bucket), tier: 'Bulk', days: 3 });
    expect(first).toMatchObject({ dryRun: false, requested: keys, inProgress: [], restored: [] });
    const second = await restoreArchive({ ...range(bucket), tier: 'Standard', days: 3 });
    expect(second).toMatchObject({ requested: [], inProgress: keys, restored: [], requestedBytes: 0 });
    expect((await findArchivedObjects(range(bucket))).map((x) => x.state)).toEqual(
      Array(4).fill('restore-in-progress'),
    );
    await expect(compactArchive({ ...range(bucket), from: HOUR_10, to: HOUR_11 })).rejects.toMatchObject({
      name: 'ArchiveRestoreRequiredError',
      keys,
      inProgress: keys,
    });

    clock.now += DELAY;
    const third = await restoreArchive({ ...range(bucket), tier: 'Bulk', days: 3 });
    expect(third.requested).toEqual([]);
    expect(third.restored.map((x) => x.key)).toEqual(keys);
    // Done June 1st 01:00, plus 3 days, rounded up to midnight UTC.
    expect(new Set(third.restored.map((x) => x.until))).toEqual(new Set(['2026-06-05T00:00:00.000Z']));

    // A later run reads them: every record once, then compaction merges the hour.
    const ids = await readAll(bucket);
    expect(ids.sort()).toEqual([...cold, ...warm].map((r) => r.eventID).sort());
    const compacted = await compactArchive({
      ...range(bucket),
      from: HOUR_10,
      to: HOUR_11,
      storageClass: 'GLACIER',
    });
    expect(compacted.hours[0]).toMatchObject({ status: 'compacted', objectsRead: 4, rowsWritten: 40 });
    // Its outputs are new GLACIER objects: archived again, needing a restore of their own.
    const after = await findArchivedObjects(range(bucket));
    expect(after.map((x) => x.state)).toEqual(Array(after.length).fill('needs-restore'));
    expect(after.map((x) => x.key)).toEqual(compacted.hours[0]?.written);
  });

  it("one tenant's range: only the objects a read of it fetches; erase checks restore states too", async () => {
    const bucket = await archive();
    const acme = await findArchivedObjects({ ...range(bucket), tenant: 'acme' });
    expect(acme).toHaveLength(2);
    expect(acme.every((x) => x.key.includes('/tenant=acme/'))).toBe(true);
    const erase = () =>
      eraseTenant({ ...range(bucket), tenant: 'acme', from: HOUR_10, to: HOUR_10 + 600_000 });
    await expect(erase()).rejects.toMatchObject({
      name: 'ArchiveRestoreRequiredError',
      keys: acme.map((x) => x.key),
    });
    const report = await restoreArchive({ ...range(bucket), tenant: 'acme', tier: 'Expedited', days: 1 });
    expect(report.requested).toEqual(acme.map((x) => x.key));
    expect((await findArchivedObjects({ ...range(bucket), tenant: 'globex' })).map((x) => x.state)).toEqual([
      'needs-restore',
      'needs-restore',
    ]);
    clock.now += DELAY;
    const erased = await erase();
    expect(erased.rewritten).toHaveLength(2);
    expect(erased.rowsErased).toBeGreaterThan(0);
  });

  it('refuses Expedited for DEEP_ARCHIVE objects before asking S3 for anything, and checks its options', async () => {
    const bucket = await archive('DEEP_ARCHIVE');
    await expect(restoreArchive({ ...range(bucket), tier: 'Expedited', days: 1 })).rejects.toThrow(
      /Expedited retrieval is not available for DEEP_ARCHIVE/,
    );
    expect((await findArchivedObjects(range(bucket))).map((x) => x.state)).toEqual(
      Array(4).fill('needs-restore'),
    );
    await expect(restoreArchive({ ...range(bucket), tier: 'Fast' as 'Bulk', days: 1 })).rejects.toThrow(
      InvalidOptionsError,
    );
    await expect(restoreArchive({ ...range(bucket), tier: 'Bulk', days: 0 })).rejects.toThrow(
      InvalidOptionsError,
    );
    await expect(restoreArchive({ ...range(bucket), tier: 'Bulk' } as never)).rejects.toThrow(/'days'/);
    const bulk = await restoreArchive({ ...range(bucket), tier: 'Bulk', days: 1 });
    expect(bulk.requested).toHaveLength(4);
  });
});
