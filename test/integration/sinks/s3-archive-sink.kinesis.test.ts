import { describe, expect, it } from 'vitest';
import { compactArchive } from '../../../src/archive.js';
import { createPipeline, kinesisSource } from '../../../src/pipeline/index.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { kinesisCopies, kinesisSequenceNumber } from '../../support/kinesis-copies.js';
import { duplicateRows, HOUR, HOUR_10, rawRows, readBack, snapshot, TABLE } from '../archive/helpers.js';

const PREFIX = 'archive';
/** 30 TTL deletes of hour 10 as Kinesis delivers them, at millisecond precision. */
const changes = sampleTtlDeletes(30, { firstTime: HOUR_10 / 1000, spacingSeconds: 10, table: TABLE });
const kinesisRecords = kinesisCopies(changes, TABLE);

describe('S3ArchiveSink fed by Kinesis', () => {
  const { s3 } = localClients();

  it('stays idempotent with a duplicate in another batch: readArchive and compactArchive keep each change once', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket, prefix: PREFIX });
    const pipeline = createPipeline({
      source: kinesisSource(),
      routes: [{ when: 'ttl-delete', to: sink }],
      metrics: false,
    });
    // Batch 1 holds the first 20 changes; batch 2 the last 10 and, again under new sequence
    // numbers (Kinesis duplicates), changes 5 and 12; batch 1 is then redelivered whole.
    expect(await pipeline.process({ Records: kinesisRecords.slice(0, 20) })).toEqual({
      batchItemFailures: [],
    });
    const again = [5, 12].map((i, k) => ({
      ...kinesisRecords[i]!,
      kinesis: { ...kinesisRecords[i]!.kinesis, sequenceNumber: kinesisSequenceNumber(400 + k) },
    }));
    expect(await pipeline.process({ Records: [...kinesisRecords.slice(20), ...again] })).toEqual({
      batchItemFailures: [],
    });
    expect(await pipeline.process({ Records: kinesisRecords.slice(0, 20) })).toEqual({
      batchItemFailures: [],
    });

    const before = await snapshot(s3, bucket);
    expect(rawRows(before)).toHaveLength(32);
    const read = await readBack(s3, bucket, { prefix: PREFIX });
    expect(read.map((r) => r.eventID).sort()).toEqual(changes.map((r) => r.eventID).sort());
    expect(read.every((r) => r.origin.source === 'kinesis' && r.kind === 'ttl-delete')).toBe(true);

    const report = await compactArchive({
      client: s3,
      bucket,
      table: TABLE,
      prefix: PREFIX,
      from: HOUR_10,
      to: HOUR_10 + HOUR,
    });
    expect(report.hours[0]).toMatchObject({
      status: 'compacted',
      rowsRead: 32,
      duplicates: 2,
      rowsWritten: 30,
    });
    const after = await snapshot(s3, bucket);
    expect(rawRows(after)).toHaveLength(30);
    expect(duplicateRows(after)).toBe(0);
    expect(new Set(rawRows(after).map((row) => row.eventID)).size).toBe(30);
    const reread = await readBack(s3, bucket, { prefix: PREFIX });
    expect(reread.map((r) => r.raw)).toEqual(read.map((r) => r.raw));
    // The exact creation time survives the archive.
    expect(reread[0]!.origin).toMatchObject({ source: 'kinesis', precision: 'MILLISECOND' });

    const rerun = await compactArchive({
      client: s3,
      bucket,
      table: TABLE,
      prefix: PREFIX,
      from: HOUR_10,
      to: HOUR_10 + HOUR,
    });
    expect(rerun.hours[0]).toMatchObject({ status: 'unchanged', written: [], deleted: [] });
  });
});
