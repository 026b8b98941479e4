import { gzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { ArchiveFormatError } from '../../../src/archive/errors.js';
import { type CorruptArchiveObject, readArchive, readArchiveRows } from '../../../src/archive.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { listKeys } from '../sinks/s3-helpers.js';

const WIDE = { table: 'archive-sample', from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' };

/** An archive of three objects in one hour (batches of 10), the middle one replaced by `body`. */
async function archiveWithCorruptMiddle(body: Uint8Array, metadata?: Record<string, string>) {
  const { s3 } = localClients();
  const bucket = await createTestBucket(s3);
  const sink = new S3ArchiveSink({ client: s3, bucket });
  const records = sampleTtlDeletes(30);
  for (let i = 0; i < 30; i += 10) await sink.write(records.slice(i, i + 10), {});
  const keys = await listKeys(s3, bucket);
  expect(keys).toHaveLength(3);
  const middle = keys[1]!;
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: middle, Body: body, Metadata: metadata }));
  return { s3, bucket, records, middle };
}

async function collect<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const row of rows) out.push(row);
  return out;
}

describe('readArchive and corrupt objects', () => {
  it.each([
    ['a zero-byte object', new Uint8Array(0)],
    ['a truncated gzip stream', gzipSync('{"eventID":"x"').subarray(0, 12)],
    ['a line that is not a row', gzipSync('{"not":"a row"}\n')],
    ['a line that is not JSON', gzipSync('{"eventID":\n')],
  ])('by default %s ends the read with an ArchiveFormatError naming it', async (_, body) => {
    const { s3, bucket, middle } = await archiveWithCorruptMiddle(body);
    const error = await collect(readArchive({ client: s3, bucket, ...WIDE })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArchiveFormatError);
    expect((error as ArchiveFormatError).key).toBe(middle);
  });

  it.each([
    ['a zero-byte object', new Uint8Array(0)],
    ['a line that is not a row', gzipSync('{"not":"a row"}\n')],
  ])('with onCorruptObject %s is skipped, reported, and every other row is read', async (_, body) => {
    const { s3, bucket, records, middle } = await archiveWithCorruptMiddle(body);
    const reported: CorruptArchiveObject[] = [];
    const back = await collect(
      readArchive({ client: s3, bucket, ...WIDE, onCorruptObject: (c) => void reported.push(c) }),
    );
    expect(back.map((r) => r.sequenceNumber)).toEqual(
      [...records.slice(0, 10), ...records.slice(20)].map((r) => r.sequenceNumber),
    );
    expect(reported).toEqual([{ key: middle, size: body.length, error: expect.any(ArchiveFormatError) }]);
  });

  it('a body that does not match its SHA-256 is corrupt too (skipped with onCorruptObject, read without verifyChecksum)', async () => {
    const other = gzipSync('');
    const { s3, bucket, middle } = await archiveWithCorruptMiddle(other, { sha256: 'AAAA' });
    const reported: string[] = [];
    const rows = await collect(
      readArchiveRows({ client: s3, bucket, ...WIDE, onCorruptObject: (c) => void reported.push(c.key) }),
    );
    expect(rows).toHaveLength(20);
    expect(reported).toEqual([middle]);
    const unverified = await collect(readArchiveRows({ client: s3, bucket, ...WIDE, verifyChecksum: false }));
    expect(unverified).toHaveLength(20);
  });

  it('a failed request is no corruption: a missing bucket still ends the read', async () => {
    const { s3 } = localClients();
    const reported: string[] = [];
    const error = await collect(
      readArchive({
        client: s3,
        bucket: 'no-such-bucket-h15',
        ...WIDE,
        onCorruptObject: (c) => void reported.push(c.key),
      }),
    ).catch((e: unknown) => e);
    expect((error as Error).name).toBe('ArchiveBucketNotFoundError');
    expect(reported).toEqual([]);
  });

  it('refuses an onCorruptObject that is not a function', async () => {
    const { s3 } = localClients();
    await expect(
      readArchive({ client: s3, bucket: 'b', ...WIDE, onCorruptObject: 'log' as never }).next(),
    ).rejects.toThrow(/option 'onCorruptObject' must be a function/);
  });
});
