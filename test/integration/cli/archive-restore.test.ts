import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { tenantFromPartitionKey } from '../../../src/archive/partition.js';
import { findArchivedObjects } from '../../../src/archive.js';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { captureOutput } from '../../support/capture-output.js';
import { stubLocalS3Env } from '../../support/local-s3-env.js';
import { tenantRecords } from '../../support/tenant-records.js';
import { HOUR_10, TABLE } from '../archive/helpers.js';

// The command builds its client from the environment, as it would against AWS.
beforeEach(stubLocalS3Env);

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  process.exitCode = undefined;
});

describe('tidewater archive restore', () => {
  const { s3 } = localClients();
  const partitionBy = tenantFromPartitionKey();
  const records = tenantRecords(60, ['acme', 'globex'], { firstTime: HOUR_10 / 1000, spacingSeconds: 30 });

  /** Hour 10 of 2026-01-15: acme's and globex's objects in DEEP_ARCHIVE, one more batch in STANDARD. */
  async function archived(): Promise<string> {
    const bucket = await createTestBucket(s3);
    const deep = new S3ArchiveSink({
      client: s3,
      bucket,
      prefix: 'archive',
      partitionBy,
      storageClass: 'DEEP_ARCHIVE',
    });
    expect(await deep.write(records.slice(0, 40), {})).toEqual({});
    const standard = new S3ArchiveSink({ client: s3, bucket, prefix: 'archive', partitionBy });
    expect(await standard.write(records.slice(40, 60), {})).toEqual({});
    return bucket;
  }

  const restore = (bucket: string, ...extra: string[]) => [
    'archive',
    'restore',
    '-b',
    bucket,
    '-t',
    TABLE,
    '-p',
    'archive/',
    '--from',
    '2026-01-15T00:00Z',
    '--to',
    '2026-01-16T00:00Z',
    ...extra,
  ];

  it('--dry-run lists exactly the archived objects and requests nothing; a run requests each once, a rerun none', async () => {
    const bucket = await archived();
    const range = {
      client: s3,
      bucket,
      table: TABLE,
      prefix: 'archive/',
      from: HOUR_10,
      to: HOUR_10 + 3_600_000,
    };
    const expected = (await findArchivedObjects(range)).map((x) => x.key);
    expect(expected).toHaveLength(2);

    let { out, err } = captureOutput();
    expect(await main(restore(bucket, '--tier', 'Bulk', '--days', '2', '--dry-run')), err.join('')).toBe(
      EXIT.ok,
    );
    const dry = JSON.parse(out.join(''));
    expect(dry.archived.map((x: { key: string }) => x.key)).toEqual(expected);
    expect(dry).toMatchObject({ dryRun: true, tier: 'Bulk', days: 2, requested: expected, notArchived: 2 });
    expect(err.join('')).toContain('2 archived object(s) in range: 2 restore(s) would request');
    expect((await findArchivedObjects(range)).map((x) => x.state)).toEqual([
      'needs-restore',
      'needs-restore',
    ]);
    vi.restoreAllMocks();

    ({ out, err } = captureOutput());
    expect(await main(restore(bucket, '--tier', 'Standard', '--days', '1', '--tenant', 'acme'))).toBe(
      EXIT.ok,
    );
    const acme = JSON.parse(out.join(''));
    expect(acme.requested).toHaveLength(1);
    expect(acme.requested[0]).toContain('/tenant=acme/');
    vi.restoreAllMocks();

    ({ out } = captureOutput());
    expect(await main(restore(bucket, '--tier', 'Standard', '--days', '1'))).toBe(EXIT.ok);
    const all = JSON.parse(out.join(''));
    // acme's restore is running or done by now; globex's is asked for now, and only it.
    expect(all.requested).toEqual(expected.filter((key) => key.includes('/tenant=globex/')));
    expect([...all.inProgress, ...all.restored.map((x: { key: string }) => x.key)]).toEqual(acme.requested);
  });

  it('refuses a tier S3 does not have and a missing --days; exits 6 when the range holds nothing', async () => {
    const bucket = await archived();
    let { err } = captureOutput();
    expect(await main(restore(bucket, '--tier', 'Fast', '--days', '1'))).toBe(EXIT.usage);
    expect(err.join('')).toMatch(/Allowed choices are Expedited, Standard, Bulk/);
    vi.restoreAllMocks();
    ({ err } = captureOutput());
    expect(await main(restore(bucket, '--tier', 'Bulk'))).toBe(EXIT.usage);
    expect(err.join('')).toMatch(/--days/);
    vi.restoreAllMocks();
    ({ err } = captureOutput());
    expect(await main([...restore(bucket, '--tier', 'Bulk', '--days', '1'), '-p', 'elsewhere/'])).toBe(
      EXIT.nothingFound,
    );
    expect(err.join('')).toContain('found nothing under');
  });
});
