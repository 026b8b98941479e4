import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tenantFromPartitionKey } from '../../../src/archive/partition.js';
import {
  ArchiveBucketNotFoundError,
  ArchiveRestoreRequiredError,
  CompactionIncompleteError,
  type CompactionManifest,
  compactArchive,
  findArchivedObjects,
  OpenPartitionError,
  restoreArchive,
  rowSetSha256,
} from '../../../src/archive.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { type S3Server, startS3Server } from '../../../src/local/servers/s3-server.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { tenantRecords } from '../../support/tenant-records.js';
import { s3ClientFor } from '../sinks/s3-helpers.js';
import {
  duplicateRows,
  HOUR,
  HOUR_10,
  rawRows,
  readBack,
  readRowsBack,
  rowId,
  snapshot,
  TABLE,
} from './helpers.js';

const PREFIX = 'archive';
const hour10 = { table: TABLE, prefix: PREFIX, from: HOUR_10, to: HOUR_10 + HOUR };

/** 260 TTL deletes 10 s apart, all in hour 10 of 2026-01-15. */
const records = sampleTtlDeletes(260, { firstTime: HOUR_10 / 1000, spacingSeconds: 10 });

/**
 * The first 240 records archived as Lambda would: batches of 40, then two redeliveries cut at
 * other points (70 rows each again, in objects overlapping the first ones).
 */
async function archiveWithRedeliveries(s3: S3Client, bucket: string): Promise<void> {
  const sink = new S3ArchiveSink({ client: s3, bucket, prefix: PREFIX });
  for (let i = 0; i < 240; i += 40) expect(await sink.write(records.slice(i, i + 40), {})).toEqual({});
  expect(await sink.write(records.slice(20, 90), {})).toEqual({});
  expect(await sink.write(records.slice(130, 200), {})).toEqual({});
}

const manifestOf = (objects: Map<string, { body: Buffer }>, key: string) =>
  JSON.parse(objects.get(key)?.body.toString('utf8') ?? '') as CompactionManifest;

describe('compactArchive on the local S3 server', () => {
  const { s3 } = localClients();

  it('leaves an hour duplicate-free in as few objects as the bound allows; readArchive returns the same records', async () => {
    const bucket = await createTestBucket(s3);
    await archiveWithRedeliveries(s3, bucket);
    const before = await snapshot(s3, bucket);
    expect(before.size).toBe(8);
    expect(duplicateRows(before)).toBe(140);
    const read = await readBack(s3, bucket, { prefix: PREFIX });
    expect(read.map((r) => r.raw)).toEqual(records.slice(0, 240).map((r) => r.raw));

    const report = await compactArchive({ client: s3, bucket, ...hour10 });
    expect(report.hours).toHaveLength(1);
    const [hour] = report.hours;
    expect(hour).toMatchObject({
      partition: `table=${TABLE}/dt=2026-01-15/hour=10`,
      status: 'compacted',
      objectsRead: 8,
      rowsRead: 380,
      duplicates: 140,
      rowsWritten: 240,
      notDeleted: [],
      late: [],
    });
    expect(hour?.written).toHaveLength(1);
    expect(hour?.deleted.sort()).toEqual([...before.keys()].sort());

    const after = await snapshot(s3, bucket);
    expect([...after.keys()].sort()).toEqual([...(hour?.written ?? []), hour?.manifest].sort());
    expect(duplicateRows(after)).toBe(0);
    expect(rawRows(after)).toHaveLength(240);
    expect((await readBack(s3, bucket, { prefix: PREFIX })).map((r) => r.raw)).toEqual(
      read.map((r) => r.raw),
    );

    // The manifest lets anyone check the hour: counts, each object's SHA-256, the row set's hash.
    const manifest = manifestOf(after, hour?.manifest as string);
    expect(manifest.rows).toEqual({ read: 380, duplicates: 140, written: 240, unassigned: 0 });
    expect(manifest.replaced.sort()).toEqual([...before.keys()].sort());
    expect(manifest.inputs.map((i) => i.key).sort()).toEqual([...before.keys()].sort());
    const output = manifest.outputs[0];
    const stored = after.get(output?.key as string)?.body as Buffer;
    expect(createHash('sha256').update(stored).digest('base64')).toBe(output?.sha256);
    expect(manifest.rowSetSha256).toBe(rowSetSha256((await readRowsBack(s3, bucket, PREFIX)).map(rowId)));

    // Safe to run twice: a compacted hour costs a listing and a manifest read, and changes nothing.
    const again = await compactArchive({ client: s3, bucket, ...hour10 });
    expect(again.hours[0]).toMatchObject({ status: 'unchanged', written: [], deleted: [] });
    const unchanged = await snapshot(s3, bucket);
    expect([...unchanged].map(([k, v]) => [k, v.etag])).toEqual([...after].map(([k, v]) => [k, v.etag]));
  });

  it('cuts at maxObjectBytes, in stream order, and a rerun with the same bound changes nothing', async () => {
    const bucket = await createTestBucket(s3);
    await archiveWithRedeliveries(s3, bucket);
    const report = await compactArchive({ client: s3, bucket, ...hour10, maxObjectBytes: 40_000 });
    const written = report.hours[0]?.written ?? [];
    expect(written.length).toBeGreaterThan(3);
    const after = await snapshot(s3, bucket);
    expect(duplicateRows(after)).toBe(0);
    const rows = await readRowsBack(s3, bucket, PREFIX);
    expect(rows.map((r) => r.sequenceNumber)).toEqual(records.slice(0, 240).map((r) => r.sequenceNumber));
    const again = await compactArchive({ client: s3, bucket, ...hour10, maxObjectBytes: 40_000 });
    expect(again.hours[0]?.status).toBe('unchanged');
  });

  it("moves a tenant's rows out of unpartitioned objects with partitionBy; a one-tenant read is the same before and after", async () => {
    const bucket = await createTestBucket(s3);
    const partitionBy = tenantFromPartitionKey();
    const sink = new S3ArchiveSink({
      client: s3,
      bucket,
      prefix: PREFIX,
      partitionBy,
      maxPartitionsPerBatch: 2,
    });
    const batch = tenantRecords(120, ['acme', 'globex', 'initech'], {
      firstTime: HOUR_10 / 1000,
      spacingSeconds: 20,
    });
    // Past the bound of 2, initech's rows went to the unpartitioned objects.
    for (let i = 0; i < 120; i += 30) expect(await sink.write(batch.slice(i, i + 30), {})).toEqual({});
    expect(await sink.write(batch.slice(15, 75), {})).toEqual({});
    const initech = await readBack(s3, bucket, { prefix: PREFIX, tenant: 'initech', partitionBy });
    expect(initech).toHaveLength(40);

    const report = await compactArchive({ client: s3, bucket, ...hour10, partitionBy });
    expect(report.hours[0]).toMatchObject({
      status: 'compacted',
      duplicates: 60,
      rowsWritten: 120,
      unassigned: 0,
    });
    expect((report.hours[0]?.written ?? []).map((k) => /tenant=([^/]+)\//.exec(k)?.[1]).sort()).toEqual([
      'acme',
      'globex',
      'initech',
    ]);
    // No unpartitioned object is left, so the tenant reads without partitionBy now.
    expect((await readBack(s3, bucket, { prefix: PREFIX, tenant: 'initech' })).map((r) => r.raw)).toEqual(
      initech.map((r) => r.raw),
    );
    const after = await snapshot(s3, bucket);
    expect(duplicateRows(after)).toBe(0);
    // Compaction carries each row's tenant field, the rows that sat unpartitioned included.
    const rows = rawRows(after);
    expect(rows).toHaveLength(120);
    for (const row of rows) expect(row.tenant).toBe(String(row.keys.pk?.S).split('#')[0]);
    expect((await readRowsBack(s3, bucket, PREFIX)).filter((row) => row.tenant === 'initech')).toHaveLength(
      40,
    );
  });

  it('changes nothing in a dry run, and says what it would do', async () => {
    const bucket = await createTestBucket(s3);
    await archiveWithRedeliveries(s3, bucket);
    const before = await snapshot(s3, bucket);
    const report = await compactArchive({ client: s3, bucket, ...hour10, dryRun: true });
    expect(report).toMatchObject({
      dryRun: true,
      hours: [{ status: 'planned', duplicates: 140, rowsWritten: 240 }],
    });
    expect(report.hours[0]?.deleted.sort()).toEqual([...before.keys()].sort());
    const after = await snapshot(s3, bucket);
    expect([...after].map(([k, v]) => [k, v.etag])).toEqual([...before].map(([k, v]) => [k, v.etag]));
  });

  it('refuses with typed errors: an open hour, a missing bucket, Glacier objects not restored, an unknown option', async () => {
    const bucket = await createTestBucket(s3);
    const now = Date.now();
    const open = compactArchive({ client: s3, bucket, table: TABLE, from: now - HOUR, to: now });
    await expect(open).rejects.toBeInstanceOf(OpenPartitionError);
    await expect(open).rejects.toThrow(/is still open: records may still arrive in it until /);
    await expect(
      compactArchive({ client: s3, bucket: `${bucket}-missing`, ...hour10 }),
    ).rejects.toBeInstanceOf(ArchiveBucketNotFoundError);

    const sink = new S3ArchiveSink({ client: s3, bucket, prefix: PREFIX, storageClass: 'GLACIER' });
    expect(await sink.write(records.slice(0, 50), {})).toEqual({});
    expect(await sink.write(records.slice(25, 80), {})).toEqual({});
    const frozen = compactArchive({ client: s3, bucket, ...hour10 });
    await expect(frozen).rejects.toBeInstanceOf(ArchiveRestoreRequiredError);
    await expect(frozen).rejects.toMatchObject({
      keys: expect.arrayContaining([expect.stringContaining('/hour=10/')]),
    });
    // Nothing changed: the same objects, still in GLACIER (GetObject would be refused).
    const archived = await findArchivedObjects({ client: s3, bucket, ...hour10 });
    expect(archived.map((x) => x.state)).toEqual(['needs-restore', 'needs-restore']);
    // Once restored (the shared local server finishes a restore in 100 ms), it compacts.
    expect(
      (await restoreArchive({ client: s3, bucket, ...hour10, tier: 'Bulk', days: 1 })).requested,
    ).toHaveLength(2);
    await vi.waitFor(
      async () => {
        const states = (await findArchivedObjects({ client: s3, bucket, ...hour10 })).map((x) => x.state);
        expect(states).toEqual(['restored', 'restored']);
      },
      { timeout: 10_000, interval: 50 },
    );
    const thawed = await compactArchive({ client: s3, bucket, ...hour10, storageClass: 'GLACIER' });
    expect(thawed.hours[0]).toMatchObject({ status: 'compacted', rowsWritten: 80 });

    await expect(
      compactArchive({ client: s3, bucket, ...hour10, dryrun: true } as Parameters<typeof compactArchive>[0]),
    ).rejects.toThrow(InvalidOptionsError);
  });
});

/**
 * A local S3 server that runs `work` once, as the compaction puts its first object: after the run
 * read the hour, before it lists it again and deletes.
 */
async function serverWithMidRunWork() {
  const midRun: { server: S3Server; work: (() => Promise<void>) | undefined } = {
    server: await startS3Server({
      middleware: [
        async (ctx, next) => {
          const work = midRun.work;
          if (ctx.method === 'PUT' && ctx.headers['x-amz-meta-compaction-manifest'] !== undefined && work) {
            midRun.work = undefined;
            await work();
          }
          await next();
        },
      ],
    }),
    work: undefined,
  };
  return midRun;
}

describe('compactArchive while the archive is being written, and after a crash', () => {
  let server: S3Server | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('keeps an object a late redelivery writes during the run, and compacts it on the next run', async () => {
    // A redelivery lands after the run listed the hour.
    const midRun = await serverWithMidRunWork();
    server = midRun.server;
    const s3 = s3ClientFor(server.endpoint);
    const bucket = await createTestBucket(s3);
    await archiveWithRedeliveries(s3, bucket);
    const sink = new S3ArchiveSink({ client: s3, bucket, prefix: PREFIX });
    // Ten rows already archived, and twenty the archive has not seen yet.
    midRun.work = async () => expect(await sink.write(records.slice(230, 260), {})).toEqual({});

    const first = await compactArchive({ client: s3, bucket, ...hour10 });
    expect(midRun.work).toBeUndefined();
    const [hour] = first.hours;
    expect(hour?.status).toBe('compacted');
    expect(hour?.late).toHaveLength(1);
    expect(hour?.deleted).not.toContain(hour?.late[0]);
    const between = await snapshot(s3, bucket);
    expect(between.has(hour?.late[0] as string)).toBe(true);
    // Nothing lost meanwhile: every record, the late ones included.
    expect((await readBack(s3, bucket, { prefix: PREFIX })).map((r) => r.raw)).toEqual(
      records.map((r) => r.raw),
    );
    expect(duplicateRows(between)).toBe(10);

    const second = await compactArchive({ client: s3, bucket, ...hour10 });
    expect(second.hours[0]).toMatchObject({
      status: 'compacted',
      duplicates: 10,
      rowsWritten: 260,
      late: [],
    });
    expect(second.hours[0]?.deleted).toContain(hour?.late[0]);
    expect(duplicateRows(await snapshot(s3, bucket))).toBe(0);
    expect((await readBack(s3, bucket, { prefix: PREFIX })).map((r) => r.raw)).toEqual(
      records.map((r) => r.raw),
    );
  });

  it('does not delete a replaced object that changed after it was read; its new content stays', async () => {
    // A writer replaces one object the run read, before the run deletes it.
    const midRun = await serverWithMidRunWork();
    server = midRun.server;
    const s3 = s3ClientFor(server.endpoint);
    const bucket = await createTestBucket(s3);
    await archiveWithRedeliveries(s3, bucket);
    const original = await snapshot(s3, bucket);
    const [changedKey, changed] = [...original][0] as [string, { body: Buffer }];
    // The same rows, other bytes (another gzip level): a new ETag for the same key.
    const newBody = gzipSync(gunzipSync(changed.body), { level: 1 });
    expect(newBody.equals(changed.body)).toBe(false);
    midRun.work = async () => {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: changedKey, Body: newBody }));
    };

    const report = await compactArchive({ client: s3, bucket, ...hour10 });
    expect(midRun.work).toBeUndefined();
    const [hour] = report.hours;
    expect(hour?.status).toBe('compacted');
    expect(hour?.notDeleted).toEqual([changedKey]);
    expect(hour?.deleted.sort()).toEqual([...original.keys()].filter((k) => k !== changedKey).sort());
    const after = await snapshot(s3, bucket);
    expect(after.get(changedKey)?.body.equals(newBody)).toBe(true);
    expect((await readBack(s3, bucket, { prefix: PREFIX })).map((r) => r.raw)).toEqual(
      records.slice(0, 240).map((r) => r.raw),
    );
  });

  it('loses nothing when it stops between writing the new objects and deleting the old; a rerun finishes', async () => {
    const fail = { deletes: false, manifests: false };
    server = await startS3Server({
      middleware: [
        async (ctx, next) => {
          const manifest = ctx.method === 'PUT' && ctx.path.includes('/_compaction/');
          if ((fail.deletes && ctx.method === 'DELETE') || (fail.manifests && manifest)) {
            ctx.status = 500;
            ctx.set('Content-Type', 'application/xml');
            ctx.body =
              '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected</Message></Error>';
            return;
          }
          await next();
        },
      ],
    });
    const s3 = s3ClientFor(server.endpoint, { maxAttempts: 1 });
    const bucket = await createTestBucket(s3);
    await archiveWithRedeliveries(s3, bucket);
    const original = await snapshot(s3, bucket);
    const expected = (await readBack(s3, bucket, { prefix: PREFIX })).map((r) => r.raw);

    // Stopped before the manifest: nothing deleted.
    fail.manifests = true;
    const beforeManifest = compactArchive({ client: s3, bucket, ...hour10 });
    await expect(beforeManifest).rejects.toBeInstanceOf(CompactionIncompleteError);
    await expect(beforeManifest).rejects.toMatchObject({ stage: 'write' });
    fail.manifests = false;
    const orphaned = await snapshot(s3, bucket);
    for (const key of original.keys()) expect(orphaned.has(key)).toBe(true);
    expect((await readBack(s3, bucket, { prefix: PREFIX })).map((r) => r.raw)).toEqual(expected);

    // Stopped after the manifest, before the deletes: old and new side by side, read as one.
    fail.deletes = true;
    const beforeDeletes = compactArchive({ client: s3, bucket, ...hour10 });
    await expect(beforeDeletes).rejects.toMatchObject({
      name: 'CompactionIncompleteError',
      stage: 'delete',
      manifestKey: expect.stringContaining(`${PREFIX}/_compaction/table=${TABLE}/dt=2026-01-15/hour=10/`),
    });
    fail.deletes = false;
    const crashed = await snapshot(s3, bucket);
    for (const key of original.keys()) expect(crashed.has(key)).toBe(true);
    expect((await readBack(s3, bucket, { prefix: PREFIX })).map((r) => r.raw)).toEqual(expected);

    const rerun = await compactArchive({ client: s3, bucket, ...hour10 });
    // The new objects are already there, byte for byte: the rerun only finishes the deletes.
    expect(rerun.hours[0]).toMatchObject({ status: 'compacted', written: [], rowsWritten: 240 });
    expect(rerun.hours[0]?.deleted.sort()).toEqual([...original.keys()].sort());
    const done = await snapshot(s3, bucket);
    expect(duplicateRows(done)).toBe(0);
    expect([...done.keys()].filter((k) => k.endsWith('.ndjson.gz'))).toHaveLength(1);
    expect((await readBack(s3, bucket, { prefix: PREFIX })).map((r) => r.raw)).toEqual(expected);
  });
});
