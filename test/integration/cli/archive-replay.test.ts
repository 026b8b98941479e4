import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { createTestBucket } from '../../support/aws.js';
import { cliTestClients, runCli } from '../../support/cli-test.js';
import { recordingService, stubLocalEndpoints } from '../../support/recording-service.js';

const { s3, dynamoEndpoint, s3Endpoint } = cliTestClients();
/** A service whose one stream function appends each TTL delete's eventID and origin to `out`. */
const service = () => recordingService({ when: 'ttl-delete', fields: '{ id: r.eventID, origin: r.origin }' });

beforeAll(() => stubLocalEndpoints(dynamoEndpoint, s3Endpoint));

const range = ['--from', '2026-01-15T00:00:00Z', '--to', '2026-01-16T00:00:00Z'];

/** `tidewater archive replay` of the day above, from a bucket's table, with serverless.yml `config`. */
function replayArgs(bucket: string, table: string, config: string, ...more: string[]): string[] {
  return ['archive', 'replay', '-b', bucket, '-t', table, ...range, '-c', config, ...more];
}

describe('tidewater archive replay', () => {
  it("replays the archive through the function's handler, each change once, with a checkpoint", async () => {
    const bucket = await createTestBucket(s3);
    const records = sampleTtlDeletes(30);
    const sink = new S3ArchiveSink({ client: s3, bucket, prefix: 'ttl' });
    for (let i = 0; i < 30; i += 10) await sink.write(records.slice(i, i + 10), {});
    await sink.write(records.slice(5, 15), {});
    const svc = await service();
    const args = replayArgs(bucket, 'archive-sample', svc.config, '-p', 'ttl');
    const { code, out } = await runCli([
      ...args,
      '--checkpoint',
      join(svc.dir, 'cp.json'),
      '--batch-size',
      '8',
      '--no-progress',
    ]);
    expect(out).toMatch(/40 rows read, 30 delivered, 0 dead-lettered, 0 failed, 10 duplicates skipped/);
    expect(code).toBe(EXIT.ok);
    const lines = (await readFile(svc.out, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id)).toEqual(records.map((r) => r.eventID));
    expect(lines.every((l) => l.origin.source === 'archive' && l.origin.hour === '2026-01-15T10')).toBe(true);

    // Run again with the checkpoint: everything is done, nothing is delivered.
    const again = await runCli([...args, '--checkpoint', join(svc.dir, 'cp.json'), '--no-progress']);
    expect(again.code).toBe(EXIT.ok);
    expect((await readFile(svc.out, 'utf8')).split('\n').filter(Boolean)).toHaveLength(30);
  });

  it('names the objects that need a restore and exits 5, delivering nothing', async () => {
    const bucket = await createTestBucket(s3);
    await new S3ArchiveSink({ client: s3, bucket, storageClass: 'DEEP_ARCHIVE' }).write(
      sampleTtlDeletes(5),
      {},
    );
    const svc = await service();
    const { code, err } = await runCli(replayArgs(bucket, 'archive-sample', svc.config, '--no-progress'));
    expect(code).toBe(EXIT.incomplete);
    expect(err).toMatch(/ArchiveRestoreRequiredError: nothing was delivered/);
    expect(err).toMatch(/table=archive-sample\/dt=2026-01-15\/hour=10\//);
    expect(err).toMatch(/tidewater archive restore/);
    await expect(readFile(svc.out, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('exits 6 when nothing is archived in the range, and 2 for a --key that is not JSON', async () => {
    const bucket = await createTestBucket(s3);
    const svc = await service();
    const empty = await runCli(replayArgs(bucket, 'archive-sample', svc.config, '--no-progress'));
    expect(empty.code).toBe(EXIT.nothingFound);
    expect(empty.err).toMatch(/found nothing under archive s3:\/\//);
    const bad = await runCli(replayArgs(bucket, 'x', svc.config, '--key', '{pk'));
    expect(bad.code).toBe(EXIT.usage);
  });
});
