import { describe, expect, it } from 'vitest';
import { createPipeline, processBatch } from '../../../src/pipeline/index.js';
import { MalformedRecordError } from '../../../src/records/errors.js';
import type { ClassifiedRecord, LambdaStreamRecord } from '../../../src/records/types.js';
import { MemorySink } from '../../../src/sinks/index.js';
import { quiet, RecordingDeadLetter, RecordingSink, seq, streamRecord } from './fixtures.js';

// routeRecords checks the keys and images of every record routed to a sink that takes only
// checked images (Sink.checkedImages: archives), before any sink or handler runs.

/** A sink that stores images as they came, and says so. */
class ArchiveLike extends RecordingSink {
  readonly checkedImages = true;
}

/** The poison an archive used to store: each breaks one rule DynamoDB keeps. */
function poisoned(i: number, kind: string): LambdaStreamRecord {
  const record = streamRecord(i, { kind: 'ttl-delete' });
  const image = record.dynamodb.OldImage as Record<string, unknown>;
  let deep: unknown = { S: 'leaf' };
  for (let level = 0; level < 5_000; level++) deep = { M: { n: deep } };
  const bad: Record<string, unknown> = {
    'bad-number': { N: '12abc' },
    'two-types': { S: 'a', N: '1' },
    'unknown-type': { X: 'a' },
    'set-as-string': { SS: 'a' },
    'empty-set': { NS: [] },
    'duplicate-member': { SS: ['a', 'a'] },
    'too-precise': { N: `1${'3'.repeat(38)}` },
    'too-deep': deep,
  };
  image.poison = bad[kind];
  return record;
}

const KINDS = [
  'bad-number',
  'two-types',
  'unknown-type',
  'set-as-string',
  'empty-set',
  'duplicate-member',
  'too-precise',
  'too-deep',
];

describe('records routed to a sink that takes checked images', () => {
  it.each(KINDS)('a %s image is dead-lettered as malformed at once and reaches no sink', async (kind) => {
    const archive = new ArchiveLike('archive');
    const counter = new RecordingSink('counter');
    const dlq = new RecordingDeadLetter();
    const seen: string[] = [];
    const response = await processBatch(
      {
        Records: [
          streamRecord(0, { kind: 'ttl-delete' }),
          poisoned(1, kind),
          streamRecord(2, { kind: 'ttl-delete' }),
        ],
      },
      {
        ...quiet,
        deadLetter: dlq,
        routes: [{ when: 'ttl-delete', to: [counter, archive] }],
        handlers: { 'ttl-delete': (record) => void seen.push(record.sequenceNumber) },
      },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(archive.calls).toEqual([[seq(0), seq(2)]]);
    // Routed nowhere else either: the other sink and the handler never see it.
    expect(counter.calls).toEqual([[seq(0), seq(2)]]);
    expect(seen).toEqual([seq(0), seq(2)]);
    expect(dlq.entries).toHaveLength(1);
    expect(dlq.entries[0]).toMatchObject({
      reason: 'malformed',
      sequenceNumber: seq(1),
      attempts: 0,
      error: { name: 'MalformedRecordError' },
    });
    expect(dlq.entries[0]?.error.message).toContain('dynamodb.OldImage.poison');
  });

  it('routes that never store images keep them lazy: no check, the sink gets the record', async () => {
    const sink = new RecordingSink('counts-only');
    const dlq = new RecordingDeadLetter();
    const response = await processBatch(
      { Records: [streamRecord(0, { kind: 'ttl-delete' }), poisoned(1, 'bad-number')] },
      { ...quiet, deadLetter: dlq, routes: [{ when: 'ttl-delete', to: sink }] },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(sink.calls).toEqual([[seq(0), seq(1)]]);
    expect(dlq.entries).toEqual([]);
  });

  it('without a dead-letter sink the poison is reported failed, and nothing after it starts', async () => {
    const archive = new ArchiveLike('archive');
    const response = await processBatch(
      {
        Records: [
          streamRecord(0, { kind: 'ttl-delete' }),
          poisoned(1, 'two-types'),
          streamRecord(2, { kind: 'ttl-delete' }),
        ],
      },
      { ...quiet, routes: [{ when: 'ttl-delete', to: archive }] },
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(1) }]);
    expect(archive.calls).toEqual([[seq(0)]]);
  });

  it('parse.validate already checks every record: no sink is checked at routing (checkedSinks 0), the poison is still dead-lettered malformed', async () => {
    const archive = new ArchiveLike('archive');
    const dlq = new RecordingDeadLetter();
    const pipeline = createPipeline({
      ...quiet,
      deadLetter: dlq,
      parse: { validate: true },
      routes: [{ when: 'ttl-delete', to: archive }],
    });
    expect(pipeline.config.checkedSinks).toBe(0);
    expect(
      createPipeline({ ...quiet, routes: [{ when: 'ttl-delete', to: archive }] }).config.checkedSinks,
    ).toBe(1);
    await pipeline.process({ Records: [poisoned(0, 'empty-set'), streamRecord(1, { kind: 'ttl-delete' })] });
    expect(archive.calls).toEqual([[seq(1)]]);
    expect(dlq.entries.map((e) => [e.sequenceNumber, e.reason])).toEqual([[seq(0), 'malformed']]);
  });

  it('a record without a creation time is malformed for an archive: dead-lettered at once, not retried', async () => {
    const { S3ArchiveSink } = await import('../../../src/sinks/s3-archive-sink.js');
    // No PUT is ever made: the only record is refused before the sink would write.
    const archive = new S3ArchiveSink({ bucket: 'never-written' });
    const dlq = new RecordingDeadLetter();
    const record = streamRecord(0, { kind: 'ttl-delete' });
    delete record.dynamodb.ApproximateCreationDateTime;
    const response = await processBatch(
      { Records: [record] },
      { ...quiet, deadLetter: dlq, routes: [{ when: 'ttl-delete', to: archive }] },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(dlq.entries).toHaveLength(1);
    expect(dlq.entries[0]).toMatchObject({ reason: 'malformed', attempts: 1, sinkName: 's3-archive' });
    expect(dlq.entries[0]?.error.message).toContain('invalid-creation-time');
  });

  it('the archive sinks declare it; the memory sink does not', async () => {
    const { S3ArchiveSink } = await import('../../../src/sinks/s3-archive-sink.js');
    const { FileSink } = await import('../../../src/sinks/file-sink.js');
    expect(new S3ArchiveSink({ bucket: 'b' }).checkedImages).toBe(true);
    expect(new FileSink({ directory: '/tmp/never-written' }).checkedImages).toBe(true);
    expect((new MemorySink() as { checkedImages?: boolean }).checkedImages).toBeUndefined();
  });

  it('poison routed only past the check (not to the archive) is found by a sink reading images and dead-lettered alone; the archive never sees it', async () => {
    // The check is on (an archive is routed), but it looks only at records routed to the archive:
    // the ttl-deletes go to a custom sink reading images, which throws MalformedRecordError.
    const archive = new ArchiveLike('archive');
    const reads = new RecordingSink(
      'reads',
      () => false,
      (records: readonly ClassifiedRecord[]) => {
        for (const r of records) void r.oldImage;
      },
    );
    const dlq = new RecordingDeadLetter();
    const pipeline = createPipeline({
      ...quiet,
      deadLetter: dlq,
      routes: [
        { when: 'ttl-delete', to: reads },
        { when: 'insert', to: archive },
      ],
    });
    expect(pipeline.config.checkedSinks).not.toBe(0);
    const response = await pipeline.process({
      Records: [poisoned(0, 'duplicate-member'), streamRecord(1, { kind: 'ttl-delete' }), streamRecord(2)],
    });
    expect(response.batchItemFailures).toEqual([]);
    expect(reads.written).toEqual([seq(1)]);
    expect(archive.calls).toEqual([[seq(2)]]);
    expect(archive.written).toEqual([seq(2)]);
    expect(dlq.entries).toHaveLength(1);
    expect(dlq.entries[0]).toMatchObject({
      reason: 'malformed',
      sequenceNumber: seq(0),
      error: { name: MalformedRecordError.name },
    });
    expect(dlq.entries[0]?.error.message).toContain('dynamodb.OldImage.poison');
  });
});
