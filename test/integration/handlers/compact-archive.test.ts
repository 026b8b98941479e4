import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { partitionTime } from '../../../src/archive/format.js';
import { floorHour } from '../../../src/archive/hours.js';
import { findArchivedObjects } from '../../../src/archive.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { duplicateRows, snapshot, TABLE } from '../archive/helpers.js';

const HOUR = 3_600_000;
const required = { ARCHIVE_BUCKET: 'b', TABLE_NAME: TABLE };

// The deployed entry point, built as in Lambda: its module reads the environment when loaded.
type HandlerModule = typeof import('../../../src/handlers/compact-archive.js');
let readCompactionConfig: HandlerModule['readCompactionConfig'];
let createCompactionHandler: HandlerModule['createCompactionHandler'];

beforeAll(async () => {
  vi.resetModules();
  vi.stubEnv('ARCHIVE_BUCKET', 'cold-start-bucket');
  vi.stubEnv('TABLE_NAME', TABLE);
  // Loads without throwing: the cold start reads this environment (the test below shows it does).
  ({ readCompactionConfig, createCompactionHandler } = await import(
    '../../../src/handlers/compact-archive.js'
  ));
  vi.unstubAllEnvs();
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('compactArchive handler configuration', () => {
  it('fills the defaults serverless.yml would set, and compacts user deletes (all-deletes) or the change log (every-change) beside TTL deletes', () => {
    expect(readCompactionConfig(required)).toEqual({
      bucket: 'b',
      table: TABLE,
      prefixes: ['archive/'],
      storageClass: 'STANDARD',
      closedAfterSeconds: 90_000,
      lookbackHours: 48,
      format: 'ndjson',
    });
    expect(
      readCompactionConfig({
        ...required,
        COMPACT_FORMAT: 'parquet',
        COMPACT_TYPED_COLUMNS: 'amount:number, status:string',
      }),
    ).toMatchObject({ format: 'parquet', typedColumns: { amount: 'number', status: 'string' } });
    expect(
      readCompactionConfig({ ...required, ARCHIVE_ROUTES: 'all-deletes', ARCHIVE_PREFIX: 'ttl/' }).prefixes,
    ).toEqual(['ttl/', 'ttl/user-deletes/']);
    expect(
      readCompactionConfig({ ...required, ARCHIVE_ROUTES: 'every-change', ARCHIVE_PREFIX: 'ttl/' }).prefixes,
    ).toEqual(['ttl/', 'ttl/changes/']);
  });

  it.each([
    [{ TABLE_NAME: '' }, 'TABLE_NAME'],
    [{ ARCHIVE_PREFIX: '' }, 'ARCHIVE_PREFIX'],
    [{ ARCHIVE_PREFIX: 'archive/*' }, 'ARCHIVE_PREFIX'],
    [{ COMPACT_AFTER_SECONDS: '600' }, 'COMPACT_AFTER_SECONDS'],
    [{ COMPACT_LOOKBACK_HOURS: 'two days' }, 'COMPACT_LOOKBACK_HOURS'],
    [{ STORAGE_CLASS: 'GLACER' }, 'STORAGE_CLASS'],
    [{ COMPACT_FORMAT: 'orc' }, 'COMPACT_FORMAT'],
    [{ COMPACT_TYPED_COLUMNS: 'amount:decimal' }, 'COMPACT_TYPED_COLUMNS'],
  ])('refuses %o with a HandlerConfigError naming the variable', (change, variable) => {
    const attempt = () => readCompactionConfig({ ...required, ...change });
    // Its own module instance (loaded with a stubbed environment): compared by name.
    expect(attempt).toThrow(expect.objectContaining({ name: 'HandlerConfigError', variable }));
  });

  it('fails the cold start, not the first run, when the environment is incomplete', async () => {
    vi.resetModules();
    vi.stubEnv('ARCHIVE_BUCKET', 'b');
    vi.stubEnv('TABLE_NAME', '');
    await expect(import('../../../src/handlers/compact-archive.js')).rejects.toMatchObject({
      name: 'HandlerConfigError',
      variable: 'TABLE_NAME',
    });
  });
});

describe('compactArchive handler on the local S3 server', () => {
  const { s3 } = localClients();

  it('compacts the closed hours of its window under each prefix, then finds them done', async () => {
    const bucket = await createTestBucket(s3);
    // An hour 30 hours ago: closed (25 h after its end), and inside a 48-hour window.
    const hourStart = floorHour(Date.now() - 30 * HOUR);
    const records = sampleTtlDeletes(120, { firstTime: hourStart / 1000 + 60, spacingSeconds: 20 });
    for (const prefix of ['archive', 'archive/user-deletes']) {
      const sink = new S3ArchiveSink({ client: s3, bucket, prefix });
      for (let i = 0; i < 120; i += 40) expect(await sink.write(records.slice(i, i + 40), {})).toEqual({});
      expect(await sink.write(records.slice(30, 100), {})).toEqual({});
    }
    const duplicates = async () => [
      duplicateRows(await snapshot(s3, bucket, 'archive/table=')),
      duplicateRows(await snapshot(s3, bucket, 'archive/user-deletes/')),
    ];
    expect(await duplicates()).toEqual([70, 70]);
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const handler = createCompactionHandler(
      readCompactionConfig({ ARCHIVE_BUCKET: bucket, TABLE_NAME: TABLE, ARCHIVE_ROUTES: 'all-deletes' }),
      s3,
    );
    const first = await handler();
    expect(first.compacted.map((h) => [h.status, h.duplicates, h.rowsWritten])).toEqual([
      ['compacted', 70, 120],
      ['compacted', 70, 120],
    ]);
    expect(await duplicates()).toEqual([0, 0]);
    expect(JSON.parse(lines.at(-1) as string)).toMatchObject({
      message: 'archive compaction run',
      compacted: 2,
      failed: 0,
      duplicatesRemoved: 140,
    });

    const second = await handler();
    expect(second.compacted).toEqual([]);
    expect(second.unchanged).toBe(2);
  });

  it('compacts the other hours when one fails, then throws so the run counts as an error', async () => {
    const bucket = await createTestBucket(s3);
    const hourStart = floorHour(Date.now() - 30 * HOUR);
    const good = sampleTtlDeletes(60, { firstTime: hourStart / 1000 + 60, spacingSeconds: 30 });
    const frozen = sampleTtlDeletes(60, {
      start: 100,
      firstTime: (hourStart - HOUR) / 1000 + 60,
      spacingSeconds: 30,
    });
    const sink = new S3ArchiveSink({ client: s3, bucket, prefix: 'archive' });
    const glacier = new S3ArchiveSink({ client: s3, bucket, prefix: 'archive', storageClass: 'GLACIER' });
    for (const [writer, batch] of [
      [sink, good],
      [glacier, frozen],
    ] as const) {
      expect(await writer.write(batch.slice(0, 40), {})).toEqual({});
      expect(await writer.write(batch.slice(20, 60), {})).toEqual({});
    }
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const handler = createCompactionHandler(
      readCompactionConfig({ ARCHIVE_BUCKET: bucket, TABLE_NAME: TABLE }),
      s3,
    );
    const run = handler();
    await expect(run).rejects.toMatchObject({
      name: 'CompactionFailedHoursError',
      failures: [{ error: expect.objectContaining({ name: 'ArchiveRestoreRequiredError' }) }],
    });
    // The readable hour was compacted all the same; the Glacier one is untouched (its two objects,
    // 20 copies in them, unreadable until restored).
    const { dt, hour } = partitionTime(hourStart / 1000);
    const readable = `archive/table=${TABLE}/dt=${dt}/hour=${hour}/`;
    expect(duplicateRows(await snapshot(s3, bucket, readable))).toBe(0);
    const frozenHour = {
      client: s3,
      bucket,
      prefix: 'archive',
      table: TABLE,
      from: hourStart - HOUR,
      to: hourStart,
    };
    expect((await findArchivedObjects(frozenHour)).map((x) => x.state)).toEqual([
      'needs-restore',
      'needs-restore',
    ]);
  });
});
