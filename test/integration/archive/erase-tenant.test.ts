import type { S3Client } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidTenantError } from '../../../src/archive/errors.js';
import { decodeObject, parseArchiveKey } from '../../../src/archive/format.js';
import { tenantFromPartitionKey } from '../../../src/archive/partition.js';
import { ArchiveBucketNotFoundError, eraseTenant, UnpartitionedObjectsError } from '../../../src/archive.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { type S3Server, startS3Server } from '../../../src/local/servers/s3-server.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { S3ArchiveSink, S3DeadLetterSink } from '../../../src/s3.js';
import type { DeadLetterEntry } from '../../../src/sinks/types.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { tenantRecords } from '../../support/tenant-records.js';
import { s3ClientFor } from '../sinks/s3-helpers.js';
import { HOUR, HOUR_10, HOUR_11, readBack, snapshot, TABLE } from './helpers.js';

const PREFIX = 'archive';
const partitionBy = tenantFromPartitionKey();
const TENANTS = ['acme', 'globex', 'initech'];
/** Hour 10: 90 records 30 s apart, written partitioned; hour 11: 90 more, written before partitioning. */
const partitioned = tenantRecords(90, TENANTS, { firstTime: HOUR_10 / 1000, spacingSeconds: 30 });
const unpartitioned = tenantRecords(90, TENANTS, {
  start: 90,
  firstTime: HOUR_11 / 1000,
  spacingSeconds: 30,
});
const tenantOf = (r: ClassifiedRecord) => partitionBy(r);

async function archive(s3: S3Client, bucket: string): Promise<void> {
  const tenantSink = new S3ArchiveSink({ client: s3, bucket, prefix: PREFIX, partitionBy });
  const plainSink = new S3ArchiveSink({ client: s3, bucket, prefix: PREFIX });
  for (let i = 0; i < 90; i += 30) {
    expect(await tenantSink.write(partitioned.slice(i, i + 30), {})).toEqual({});
    expect(await plainSink.write(unpartitioned.slice(i, i + 30), {})).toEqual({});
  }
}

function deadLetter(
  record: ClassifiedRecord | { junk: true },
  reason: DeadLetterEntry['reason'],
): DeadLetterEntry {
  const raw = 'raw' in record ? record.raw : record;
  return {
    reason,
    record: raw,
    eventID: 'raw' in record ? record.eventID : undefined,
    sequenceNumber: 'raw' in record ? record.sequenceNumber : undefined,
    eventSourceARN: undefined,
    error: { name: 'Error', message: 'poison' },
    attempts: 3,
    at: new Date(HOUR_10 + 60_000).toISOString(),
  };
}

describe('eraseTenant on the local S3 server', () => {
  const { s3 } = localClients();
  const range = { table: TABLE, prefix: PREFIX, from: HOUR_10, to: HOUR_11 + HOUR };

  it("erases one tenant and leaves every other tenant's objects byte-identical", async () => {
    const bucket = await createTestBucket(s3);
    await archive(s3, bucket);
    const dl = new S3DeadLetterSink({ client: s3, bucket, prefix: 'dead-letter' });
    const globexLetter = deadLetter(partitioned[1] as ClassifiedRecord, 'retries-exhausted');
    await dl.send(
      [
        globexLetter,
        deadLetter(partitioned[0] as ClassifiedRecord, 'retries-exhausted'), // acme
        deadLetter({ junk: true }, 'malformed'),
      ],
      {},
    );
    const globexLetterKey = dl.keyFor(globexLetter);
    const before = await snapshot(s3, bucket);
    const othersBefore = await readBack(s3, bucket, { prefix: PREFIX });

    // A dry run lists what would go and changes nothing.
    const options = {
      client: s3,
      bucket,
      ...range,
      tenant: 'globex',
      partitionBy,
      deadLetter: { prefix: 'dead-letter' },
    };
    const planned = await eraseTenant({ ...options, dryRun: true });
    const untouched = await snapshot(s3, bucket);
    expect([...untouched].map(([k, v]) => [k, v.etag])).toEqual([...before].map(([k, v]) => [k, v.etag]));
    expect(planned).toMatchObject({
      tenant: 'globex',
      segment: 'globex',
      dryRun: true,
      rowsErased: 60,
      versionsDeleted: 0,
    });

    const report = await eraseTenant(options);
    expect({ ...report, dryRun: true, versionsDeleted: 0 }).toEqual(planned);
    // Hour 10: globex's own objects (one a batch), deleted whole and unread; hour 11: the three
    // unpartitioned objects, rewritten without its rows.
    expect(report.deleted.map((d) => [parseArchiveKey(d.key)?.tenant, d.rows])).toEqual([
      ['globex', 10],
      ['globex', 10],
      ['globex', 10],
    ]);
    expect(report.rewritten.map((r) => [r.rowsErased, r.rowsKept])).toEqual([
      [10, 20],
      [10, 20],
      [10, 20],
    ]);
    expect(report.rowsErased).toBe(60);
    expect(report.deadLetters?.deleted).toEqual([globexLetterKey]);
    expect(report.deadLetters?.unattributed).toHaveLength(1);

    const after = await snapshot(s3, bucket);
    // Other tenants' partitioned objects: the same keys, ETags and bytes.
    for (const [key, object] of before) {
      const tenant = parseArchiveKey(key)?.tenant;
      if (tenant === undefined || tenant === 'globex') continue;
      expect(after.get(key)?.etag, key).toBe(object.etag);
      expect(after.get(key)?.body.equals(object.body), key).toBe(true);
    }
    // The rewritten objects hold the other tenants' rows as the old ones did, line for line.
    for (const r of report.rewritten) {
      const old = decodeObject(before.get(r.key)?.body as Buffer, r.key).filter(
        (row) => !row.keys.pk?.S?.startsWith('globex#'),
      );
      const now = decodeObject(after.get(r.replacement)?.body as Buffer, r.replacement);
      expect(now.map((row) => JSON.stringify(row))).toEqual(old.map((row) => JSON.stringify(row)));
      expect(after.has(r.key)).toBe(false);
    }
    const rest = await readBack(s3, bucket, { prefix: PREFIX });
    expect(rest.map((r) => r.raw)).toEqual(
      othersBefore.filter((r) => tenantOf(r) !== 'globex').map((r) => r.raw),
    );
    expect(await readBack(s3, bucket, { prefix: PREFIX, tenant: 'globex', partitionBy })).toEqual([]);
    // The dead-letter store: globex's entry gone, acme's and the unreadable one kept.
    const letters = [...after.keys()].filter((k) => k.startsWith('dead-letter/'));
    expect(before.has(globexLetterKey)).toBe(true);
    expect(after.has(globexLetterKey)).toBe(false);
    expect(letters).toHaveLength(2);
    expect(letters).toContain(report.deadLetters?.unattributed[0]);

    // Running it again finds nothing left.
    const again = await eraseTenant(options);
    expect(again).toMatchObject({ deleted: [], rewritten: [], rowsErased: 0, deadLetters: { deleted: [] } });
  });

  it('keeps the rows of a cut hour that fall outside the range', async () => {
    const bucket = await createTestBucket(s3);
    await archive(s3, bucket);
    // From 10:20, in hour 10 which the range cuts: globex's object of 10:00-10:15 stays, that of
    // 10:15-10:30 is rewritten with its rows before 10:20, that of 10:30-10:45 goes whole.
    const from = HOUR_10 + HOUR / 3;
    const report = await eraseTenant({ client: s3, bucket, ...range, from, tenant: 'globex', partitionBy });
    expect(report.deleted.map((d) => [parseArchiveKey(d.key)?.hour, d.rows])).toEqual([['10', 10]]);
    expect(
      report.rewritten.map((r) => [parseArchiveKey(r.key)?.tenant ?? '(mixed)', r.rowsErased, r.rowsKept]),
    ).toEqual([
      ['globex', 7, 3],
      ['(mixed)', 10, 20],
      ['(mixed)', 10, 20],
      ['(mixed)', 10, 20],
    ]);
    const globex = await readBack(s3, bucket, { prefix: PREFIX, tenant: 'globex', partitionBy });
    expect(globex.map((r) => r.raw)).toEqual(
      partitioned
        .filter((r) => tenantOf(r) === 'globex' && (r.approximateCreationTime as number) * 1000 < from)
        .map((r) => r.raw),
    );
  });

  it('refuses with typed errors before changing anything', async () => {
    const bucket = await createTestBucket(s3);
    await archive(s3, bucket);
    const before = await snapshot(s3, bucket);
    const base = { client: s3, bucket, ...range };
    await expect(eraseTenant({ ...base, tenant: 'acme/eu', partitionBy })).rejects.toBeInstanceOf(
      InvalidTenantError,
    );
    await expect(eraseTenant({ ...base, tenant: '', partitionBy })).rejects.toBeInstanceOf(
      InvalidTenantError,
    );
    const withoutPartitioner = eraseTenant({ ...base, tenant: 'globex' });
    await expect(withoutPartitioner).rejects.toBeInstanceOf(UnpartitionedObjectsError);
    await expect(withoutPartitioner).rejects.toMatchObject({
      keys: expect.arrayContaining([expect.stringContaining('/hour=11/')]),
    });
    await expect(
      eraseTenant({ ...base, tenant: 'globex', deadLetter: { prefix: 'dead-letter' } }),
    ).rejects.toBeInstanceOf(InvalidOptionsError);
    // A bad `sse` is an options error found before any work, in a dry run too: not an
    // EraseIncompleteError once the rewrites began.
    for (const dryRun of [false, true]) {
      await expect(
        eraseTenant({ ...base, tenant: 'globex', partitionBy, dryRun, sse: { kmsKeyId: '' } }),
      ).rejects.toMatchObject({ name: 'InvalidOptionsError', option: 'sse.kmsKeyId' });
    }
    await expect(
      eraseTenant({ ...base, bucket: `${bucket}-missing`, tenant: 'globex', partitionBy }),
    ).rejects.toBeInstanceOf(ArchiveBucketNotFoundError);
    const after = await snapshot(s3, bucket);
    expect([...after].map(([k, v]) => [k, v.etag])).toEqual([...before].map(([k, v]) => [k, v.etag]));

    // A one-tenant read refuses unpartitioned objects without partitionBy too, rather than return part.
    await expect(readBack(s3, bucket, { prefix: PREFIX, tenant: 'globex' })).rejects.toBeInstanceOf(
      UnpartitionedObjectsError,
    );
  });
});

describe('eraseTenant on a bucket that keeps versions', () => {
  let server: S3Server | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('deletes every version and delete marker of each erased key, and nothing of a longer key', async () => {
    // The local server has no versioning: this one answers GetBucketVersioning and
    // ListObjectVersions as a versioned bucket would (two versions and a delete marker per key,
    // and a longer key sharing the prefix), and records each DELETE's versionId.
    const deletes: { key: string; versionId: string | undefined }[] = [];
    const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>${body}`;
    server = await startS3Server({
      middleware: [
        async (ctx, next) => {
          const query = (ctx as unknown as { query: Record<string, string | undefined> }).query;
          if (ctx.method === 'GET' && 'versioning' in query) {
            ctx.status = 200;
            ctx.set('Content-Type', 'application/xml');
            ctx.body = xml('<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>');
            return;
          }
          if (ctx.method === 'GET' && 'versions' in query) {
            const key = query.prefix ?? '';
            const entry = (tag: string, k: string, id: string) =>
              `<${tag}><Key>${k}</Key><VersionId>${id}</VersionId><IsLatest>false</IsLatest><LastModified>2026-01-15T10:00:00.000Z</LastModified></${tag}>`;
            ctx.status = 200;
            ctx.set('Content-Type', 'application/xml');
            ctx.body = xml(
              `<ListVersionsResult><Name>b</Name><Prefix>${key}</Prefix><IsTruncated>false</IsTruncated>` +
                `${entry('Version', key, 'v2')}${entry('Version', key, 'v1')}${entry('Version', `${key}.longer`, 'other')}` +
                `${entry('DeleteMarker', key, 'd1')}</ListVersionsResult>`,
            );
            return;
          }
          if (ctx.method === 'DELETE') {
            deletes.push({ key: ctx.path.split('/').slice(2).join('/'), versionId: query.versionId });
          }
          await next();
        },
      ],
    });
    const s3 = s3ClientFor(server.endpoint);
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket, prefix: PREFIX, partitionBy });
    for (let i = 0; i < 90; i += 30) expect(await sink.write(partitioned.slice(i, i + 30), {})).toEqual({});

    const report = await eraseTenant({
      client: s3,
      bucket,
      table: TABLE,
      prefix: PREFIX,
      from: HOUR_10,
      to: HOUR_10 + HOUR,
      tenant: 'globex',
    });
    expect(report.deleted).toHaveLength(3);
    expect(report.versionsDeleted).toBe(9);
    for (const { key } of report.deleted) {
      // Each version once at least (the client may resend a DELETE; deleting twice is harmless).
      const versions = deletes.filter((d) => decodeURIComponent(d.key) === key).map((d) => d.versionId);
      expect([...new Set(versions)].sort()).toEqual(['d1', 'v1', 'v2']);
    }
    expect(deletes.some((d) => d.versionId === 'other')).toBe(false);
  });
});
