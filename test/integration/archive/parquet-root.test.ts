import { describe, expect, it } from 'vitest';
import { compactArchive, restoreArchive } from '../../../src/archive.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { HOUR, HOUR_10, readRowsBack, rowId, snapshot, TABLE } from './helpers.js';

/**
 * Parquet objects live under their own root (`<prefix>/parquet/table=…`), so no folder Athena
 * reads as a partition holds both formats; the project's readers and compaction see both roots as
 * one hour. On the local S3 server.
 */

/** 240 TTL deletes 10 s apart, all in hour 10 of 2026-01-15. */
const records = sampleTtlDeletes(240, { firstTime: HOUR_10 / 1000, spacingSeconds: 10 });

const dataKeys = async (s3: ReturnType<typeof localClients>['s3'], bucket: string) =>
  [...(await snapshot(s3, bucket)).keys()].filter((k) => !k.includes('_compaction/'));

/** The formats the objects of each folder hold: one folder, one format. */
function formatsByFolder(keys: readonly string[]): Map<string, Set<string>> {
  const folders = new Map<string, Set<string>>();
  for (const key of keys) {
    const folder = key.slice(0, key.indexOf('/hour=') + 9);
    const formats = folders.get(folder) ?? new Set<string>();
    formats.add(key.endsWith('.parquet') ? 'parquet' : 'ndjson');
    folders.set(folder, formats);
  }
  return folders;
}

describe('the Parquet root', () => {
  const { s3 } = localClients();

  it('keeps a late NDJSON write apart from a compacted hour, reads both as one hour, and moves the hour between roots', async () => {
    const bucket = await createTestBucket(s3);
    // No prefix: the Parquet root is `parquet/`.
    const sink = new S3ArchiveSink({ client: s3, bucket });
    const hour = { client: s3, bucket, table: TABLE, from: HOUR_10, to: HOUR_10 + HOUR };
    for (let i = 0; i < 200; i += 40) expect(await sink.write(records.slice(i, i + 40), {})).toEqual({});

    const toParquet = await compactArchive({ ...hour, format: 'parquet' });
    expect(toParquet.hours.map((h) => [h.status, h.rowsWritten, h.deleted.length])).toEqual([
      ['compacted', 200, 5],
    ]);
    let keys = await dataKeys(s3, bucket);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.startsWith(`parquet/table=${TABLE}/dt=2026-01-15/hour=10/`))).toBe(true);
    expect(keys.every((k) => k.endsWith('.parquet'))).toBe(true);

    // A late redelivery writes NDJSON into the compacted hour: its own folder, read with the Parquet rows.
    expect(await sink.write(records.slice(200, 240), {})).toEqual({});
    keys = await dataKeys(s3, bucket);
    expect([...formatsByFolder(keys)]).toEqual([
      [`parquet/table=${TABLE}/dt=2026-01-15/hour=10/`, new Set(['parquet'])],
      [`table=${TABLE}/dt=2026-01-15/hour=10/`, new Set(['ndjson'])],
    ]);
    const rows = await readRowsBack(s3, bucket);
    expect(rows.map((r) => r.eventID).sort()).toEqual(records.map((r) => r.eventID).sort());
    // Every reader lists both roots: restoreArchive counts every object of the hour.
    const restore = await restoreArchive({ ...hour, tier: 'Bulk', days: 1, dryRun: true });
    expect([restore.archived, restore.notArchived]).toEqual([[], keys.length]);

    // Compaction in the same format takes the late object in: the NDJSON root is empty again.
    const again = await compactArchive({ ...hour, format: 'parquet' });
    expect(again.hours.map((h) => [h.status, h.rowsRead, h.rowsWritten, h.late])).toEqual([
      ['compacted', 240, 240, []],
    ]);
    expect(again.hours[0]?.deleted).toContain(keys.find((k) => k.endsWith('.ndjson.gz')));
    keys = await dataKeys(s3, bucket);
    expect(keys.every((k) => k.startsWith('parquet/') && k.endsWith('.parquet'))).toBe(true);
    const unchanged = await compactArchive({ ...hour, format: 'parquet' });
    expect(unchanged.hours.map((h) => h.status)).toEqual(['unchanged']);

    // Back to NDJSON: the hour moves to the NDJSON root, its Parquet objects deleted.
    const parquetKeys = keys;
    const back = await compactArchive({ ...hour, format: 'ndjson' });
    expect(back.hours.map((h) => [h.status, h.rowsWritten])).toEqual([['compacted', 240]]);
    expect([...(back.hours[0]?.deleted ?? [])].sort()).toEqual([...parquetKeys].sort());
    keys = await dataKeys(s3, bucket);
    expect(keys.every((k) => k.startsWith(`table=${TABLE}/`) && k.endsWith('.ndjson.gz'))).toBe(true);
    expect((await readRowsBack(s3, bucket)).map(rowId).sort()).toEqual(rows.map(rowId).sort());
    expect((await compactArchive({ ...hour, format: 'ndjson' })).hours.map((h) => h.status)).toEqual([
      'unchanged',
    ]);
  });

  it('an NDJSON archive whose prefix is `<prefix>/parquet` shares a folder with the Parquet root of `<prefix>`, and neither archive reads the other', async () => {
    const bucket = await createTestBucket(s3);
    const outer = new S3ArchiveSink({ client: s3, bucket, prefix: 'archive' });
    const inner = new S3ArchiveSink({ client: s3, bucket, prefix: 'archive/parquet' });
    expect(await outer.write(records.slice(0, 60), {})).toEqual({});
    expect(await outer.write(records.slice(60, 120), {})).toEqual({});
    expect(await inner.write(records.slice(120, 180), {})).toEqual({});
    expect(await inner.write(records.slice(180, 240), {})).toEqual({});
    const innerObjects = [...(await dataKeys(s3, bucket))].filter((k) => k.startsWith('archive/parquet/'));
    const range = { client: s3, bucket, table: TABLE, from: HOUR_10, to: HOUR_10 + HOUR };

    const outerReport = await compactArchive({ ...range, prefix: 'archive', format: 'parquet' });
    // Only its own two objects read; the inner archive's objects, in the folder it writes to, are
    // neither read, nor late, nor deleted.
    expect(outerReport.hours.map((h) => [h.objectsRead, h.rowsWritten, h.late, h.deleted.length])).toEqual([
      [2, 120, [], 2],
    ]);
    const keys = await dataKeys(s3, bucket);
    for (const key of innerObjects) expect(keys).toContain(key);
    expect(keys.filter((k) => k.startsWith('archive/table='))).toEqual([]);

    const outerRows = await readRowsBack(s3, bucket, 'archive');
    const innerRows = await readRowsBack(s3, bucket, 'archive/parquet');
    expect(outerRows.map((r) => r.eventID)).toEqual(records.slice(0, 120).map((r) => r.eventID));
    expect(innerRows.map((r) => r.eventID)).toEqual(records.slice(120, 240).map((r) => r.eventID));

    // The inner archive compacts its own objects only, the outer's Parquet objects untouched.
    const outerParquet = keys.filter((k) => k.endsWith('.parquet'));
    const innerReport = await compactArchive({ ...range, prefix: 'archive/parquet' });
    expect(innerReport.hours.map((h) => [h.objectsRead, h.rowsWritten, h.late])).toEqual([[2, 120, []]]);
    const after = await dataKeys(s3, bucket);
    for (const key of outerParquet) expect(after).toContain(key);
    expect((await readRowsBack(s3, bucket, 'archive')).map((r) => r.eventID)).toEqual(
      outerRows.map((r) => r.eventID),
    );
  });
});
