import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { tenantFromPartitionKey } from '../../../src/archive/partition.js';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { captureOutput } from '../../support/capture-output.js';
import { stubLocalS3Env } from '../../support/local-s3-env.js';
import { tenantRecords } from '../../support/tenant-records.js';
import { duplicateRows, HOUR_10, snapshot, TABLE } from '../archive/helpers.js';

// The command builds its client from the environment, as it would against AWS.
beforeEach(stubLocalS3Env);

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  process.exitCode = undefined;
});

describe('tidewater archive', () => {
  const { s3 } = localClients();
  const partitionBy = tenantFromPartitionKey();
  const records = tenantRecords(60, ['acme', 'globex'], { firstTime: HOUR_10 / 1000, spacingSeconds: 30 });

  async function archived(): Promise<string> {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket, prefix: 'archive', partitionBy });
    expect(await sink.write(records.slice(0, 40), {})).toEqual({});
    expect(await sink.write(records.slice(20, 60), {})).toEqual({});
    return bucket;
  }

  /** `archive erase-tenant` of `tenant` in `bucket` over 2026-01-15; `extra` adds table, prefix, tenant key. */
  const eraseTenant = (bucket: string, tenant: string, ...extra: string[]) => [
    'archive',
    'erase-tenant',
    '-b',
    bucket,
    '--tenant',
    tenant,
    '--from',
    '2026-01-15T00:00Z',
    '--to',
    '2026-01-16T00:00Z',
    ...extra,
  ];

  /** `archive compact` of `bucket`'s archive/ prefix; `extra` picks the hours. */
  const compact = (bucket: string, ...extra: string[]) => [
    'archive',
    'compact',
    '-b',
    bucket,
    '-t',
    TABLE,
    '-p',
    'archive/',
    ...extra,
  ];

  it('compact --dry-run reports and changes nothing; compact compacts; the report is JSON', async () => {
    const bucket = await archived();
    const before = await snapshot(s3, bucket);
    const args = compact(bucket, '--hour', '2026-01-15T10');
    let { out } = captureOutput();
    expect(await main([...args, '--dry-run'])).toBe(EXIT.ok);
    expect(JSON.parse(out.join(''))).toMatchObject({
      dryRun: true,
      hours: [{ status: 'planned', duplicates: 20 }],
    });
    expect([...(await snapshot(s3, bucket)).keys()]).toEqual([...before.keys()]);
    vi.restoreAllMocks();

    ({ out } = captureOutput());
    expect(await main(args)).toBe(EXIT.ok);
    expect(JSON.parse(out.join(''))).toMatchObject({
      dryRun: false,
      hours: [{ status: 'compacted', rowsWritten: 60 }],
    });
    expect(duplicateRows(await snapshot(s3, bucket))).toBe(0);
  });

  it('compact --format parquet --typed-column writes the hour as Parquet, and refuses a typed column of no type', async () => {
    const bucket = await archived();
    const args = compact(bucket, '--hour', '2026-01-15T10', '--format', 'parquet');
    const { out } = captureOutput();
    expect(await main([...args, '--typed-column', 'amount:number'])).toBe(EXIT.ok);
    const report = JSON.parse(out.join('')) as {
      hours: { status: string; rowsWritten: number; written: string[] }[];
    };
    expect(report.hours).toMatchObject([{ status: 'compacted', rowsWritten: 60 }]);
    expect(report.hours[0]?.written.every((key) => key.endsWith('.parquet'))).toBe(true);
    const keys = [...(await snapshot(s3, bucket)).keys()].filter((k) => !k.includes('/_compaction/'));
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((key) => key.endsWith('.parquet'))).toBe(true);
    vi.restoreAllMocks();
    captureOutput();
    expect(await main([...args, '--typed-column', 'amount:decimal'])).toBe(EXIT.usage);
  });

  it('compact --from/--to whose last hours are still open compacts the closed hours and reports the open ones skipped', async () => {
    const bucket = await archived();
    // Hours 10 and 11 closed, 12 open: 12 closes half an hour from now (whatever now is).
    const hour12End = HOUR_10 + 3 * 3_600_000;
    const closedAfter = Math.floor((Date.now() - hour12End) / 1000) + 1800;
    const { out, err } = captureOutput();
    const code = await main([
      ...compact(bucket),
      '--from',
      new Date(HOUR_10).toISOString(),
      '--to',
      new Date(hour12End).toISOString(),
      '--closed-after',
      String(closedAfter),
    ]);
    expect(code, err.join('')).toBe(EXIT.ok);
    const report = JSON.parse(out.join(''));
    expect(report.hours).toMatchObject([{ status: 'compacted', rowsWritten: 60 }]);
    expect(report.skippedOpen).toMatchObject({
      from: new Date(HOUR_10 + 2 * 3_600_000).toISOString(),
      hours: 1,
    });
    expect(err.join('')).toMatch(/skipped 1 hour still open .*compact it after that/);
    expect(duplicateRows(await snapshot(s3, bucket))).toBe(0);
  });

  it("erase-tenant erases one tenant's rows and prints what went", async () => {
    const bucket = await archived();
    const { out } = captureOutput();
    const code = await main(
      eraseTenant(bucket, 'globex', '-t', TABLE, '-p', 'archive/', '--tenant-key', 'pk'),
    );
    expect(code).toBe(EXIT.ok);
    const report = JSON.parse(out.join(''));
    expect(report).toMatchObject({ tenant: 'globex', rowsErased: 40, rewritten: [] });
    expect(report.deleted).toHaveLength(2);
    const left = [...(await snapshot(s3, bucket)).keys()];
    expect(left.every((k) => k.includes('/tenant=acme/'))).toBe(true);
  });

  it('erase-tenant and compact that find nothing exit non-zero and say where they looked', async () => {
    const bucket = await archived();
    const before = await snapshot(s3, bucket);
    const erase = (...extra: string[]) => eraseTenant(bucket, 'globex', '--tenant-key', 'pk', ...extra);
    const runs = [
      // No -p: the sink wrote under archive/.
      [erase('-t', TABLE), `s3://${bucket}/table=${TABLE}/`],
      // A mistyped table.
      [erase('-t', `${TABLE}x`, '-p', 'archive/'), `s3://${bucket}/archive/table=${TABLE}x/`],
      [
        ['archive', 'compact', '-b', bucket, '-t', TABLE, '--hour', '2026-01-15T10'],
        `s3://${bucket}/table=${TABLE}/`,
      ],
      [
        ['archive', 'compact', '-b', bucket, '-t', TABLE, '-p', 'archive/', '--hour', '2026-01-15T11'],
        `s3://${bucket}/archive/table=${TABLE}/`,
      ],
    ] as const;
    for (const [args, where] of runs) {
      const { err } = captureOutput();
      expect(await main([...args]), args.join(' ')).toBe(EXIT.nothingFound);
      expect(err.join(''), args.join(' ')).toContain(where);
      expect(err.join(''), args.join(' ')).toMatch(/found nothing/);
      vi.restoreAllMocks();
    }
    expect([...(await snapshot(s3, bucket)).keys()]).toEqual([...before.keys()]);
  });

  it('names typed errors, refuses a wrong command line with the usage code', async () => {
    const bucket = await archived();
    const { err } = captureOutput();
    const now = new Date().toISOString().slice(0, 13);
    expect(await main(['archive', 'compact', '-b', bucket, '-t', TABLE, '--hour', now])).toBe(EXIT.error);
    expect(err.join('')).toMatch(/OpenPartitionError: .* is still open/);
    expect(await main(eraseTenant(bucket, 'acme/eu', '-t', TABLE))).toBe(EXIT.error);
    expect(err.join('')).toMatch(/InvalidTenantError: tenant "acme\/eu": a tenant id must not contain '\/'/);
    expect(
      await main(['archive', 'compact', '-b', `${bucket}-missing`, '-t', TABLE, '--hour', '2026-01-15T10']),
    ).toBe(EXIT.error);
    expect(err.join('')).toMatch(/ArchiveBucketNotFoundError/);
    expect(await main(['archive', 'compact', '-b', bucket, '-t', TABLE])).toBe(EXIT.usage);
    expect(err.join('')).toMatch(/give --hour, or --from and --to/);
    expect(await main(['archive', 'compact', '-b', bucket, '-t', TABLE, '--hour', 'noon'])).toBe(EXIT.usage);
  });
});
