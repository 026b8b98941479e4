import { describe, expect, it } from 'vitest';
import { processBatch } from '../../../src/pipeline/index.js';
import { batch, quiet, RecordingDeadLetter, RecordingSink, seq, streamRecord } from './fixtures.js';

describe('poison records', () => {
  it('dead-letters a malformed record with its raw form and goes on with the batch', async () => {
    const sink = new RecordingSink('s');
    const dlq = new RecordingDeadLetter();
    const bad = { ...streamRecord(1), eventName: 'UPSERT' };
    const event = { Records: [streamRecord(0), bad, streamRecord(2)] };
    const response = await processBatch(event, {
      ...quiet,
      deadLetter: dlq,
      routes: [{ when: 'insert', to: sink }],
    });
    expect(response.batchItemFailures).toEqual([]);
    expect(sink.calls).toEqual([[seq(0), seq(2)]]);
    expect(dlq.entries).toHaveLength(1);
    expect(dlq.entries[0]).toMatchObject({
      reason: 'malformed',
      record: bad,
      eventID: 'event-1',
      sequenceNumber: seq(1),
      error: { name: 'MalformedRecordError' },
    });
  });

  it('dead-letters a record whose attribute values are invalid (eager parse)', async () => {
    const dlq = new RecordingDeadLetter();
    const bad = streamRecord(0);
    (bad.dynamodb.NewImage as Record<string, unknown>).n = { N: 'twelve' };
    const response = await processBatch(
      { Records: [bad] },
      { ...quiet, deadLetter: dlq, routes: [{ when: 'insert', to: new RecordingSink('s') }] },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(dlq.entries.map((e) => e.reason)).toEqual(['malformed']);
  });

  it('dead-letters a record that keeps failing after exactly the configured attempts, then counts it done', async () => {
    const sink = new RecordingSink('s', (s) => s === seq(2));
    const dlq = new RecordingDeadLetter();
    const response = await processBatch(batch(5), {
      ...quiet,
      retry: { attempts: 4, baseDelayMs: 1, maxDelayMs: 2 },
      deadLetter: dlq,
      routes: [{ when: 'insert', to: sink }],
    });
    expect(response.batchItemFailures).toEqual([]);
    expect(sink.calls).toEqual([[0, 1, 2, 3, 4].map(seq), [seq(2)], [seq(2)], [seq(2)]]);
    expect(dlq.entries).toMatchObject([
      {
        reason: 'retries-exhausted',
        sequenceNumber: seq(2),
        attempts: 4,
        sinkName: 's',
        error: { message: `rejected ${seq(2)}` },
      },
    ]);
    expect(sink.written).toEqual([0, 1, 3, 4].map(seq));
  });

  it('does not retry errors the config calls non-retryable', async () => {
    class Permanent extends Error {}
    const sink = {
      name: 'p',
      write: () => {
        throw new Permanent('schema rejected');
      },
    };
    const dlq = new RecordingDeadLetter();
    const response = await processBatch(batch(2), {
      ...quiet,
      retry: { attempts: 5, baseDelayMs: 0, maxDelayMs: 0, retryable: (e) => !(e instanceof Permanent) },
      deadLetter: dlq,
      routes: [{ when: 'insert', to: sink }],
    });
    expect(response.batchItemFailures).toEqual([]);
    expect(dlq.entries.map((e) => [e.reason, e.attempts])).toEqual([
      ['retries-exhausted', 1],
      ['retries-exhausted', 1],
    ]);
  });

  it('dead-letters a failing record older than maxRecordAgeSeconds without more retries', async () => {
    const now = 1_800_000_000_000;
    const sink = new RecordingSink('s', () => true);
    const dlq = new RecordingDeadLetter();
    const response = await processBatch(
      batch(2, (i) => ({ created: i === 0 ? 1_800_000_000 - 7200 : 1_800_000_000 })),
      {
        ...quiet,
        clock: () => now,
        maxRecordAgeSeconds: 3600,
        retry: { attempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
        deadLetter: dlq,
        routes: [{ when: 'insert', to: sink }],
      },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(dlq.entries.map((e) => [e.sequenceNumber, e.reason, e.attempts])).toEqual([
      [seq(0), 'record-too-old', 1],
      [seq(1), 'retries-exhausted', 3],
    ]);
  });

  it('never drops: without a dead-letter sink the poison record is reported failed', async () => {
    const sink = new RecordingSink('s', (s) => s === seq(1));
    const response = await processBatch(batch(3), { ...quiet, routes: [{ when: 'insert', to: sink }] });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(1) }]);
    const malformed = await processBatch(
      { Records: [streamRecord(0), { ...streamRecord(1), eventName: 'UPSERT' }] },
      { ...quiet, routes: [{ when: 'insert', to: new RecordingSink('t') }] },
    );
    expect(malformed.batchItemFailures).toEqual([{ itemIdentifier: seq(1) }]);
  });

  it('reports the record failed when the dead-letter send throws', async () => {
    const sink = new RecordingSink('s', (s) => s === seq(2) || s === seq(3));
    const response = await processBatch(batch(5), {
      ...quiet,
      deadLetter: new RecordingDeadLetter(true),
      routes: [{ when: 'insert', to: sink }],
    });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(2) }]);
  });

  it('dead-letters or fails unrouted records as configured, and never drops them silently', async () => {
    const sink = new RecordingSink('s');
    const dlq = new RecordingDeadLetter();
    const event = batch(3, (i) => ({ kind: i === 1 ? 'user-delete' : 'insert' }));
    const lettered = await processBatch(event, {
      ...quiet,
      onUnrouted: 'dead-letter',
      deadLetter: dlq,
      routes: [{ when: 'insert', to: sink }],
    });
    expect(lettered.batchItemFailures).toEqual([]);
    expect(dlq.entries.map((e) => [e.sequenceNumber, e.reason])).toEqual([[seq(1), 'unrouted']]);
    const failed = await processBatch(event, {
      ...quiet,
      onUnrouted: 'fail',
      routes: [{ when: 'insert', to: sink }],
    });
    expect(failed.batchItemFailures).toEqual([{ itemIdentifier: seq(1) }]);
  });

  it('flushes buffering sinks before answering, and fails their records when the flush fails', async () => {
    const buffered: string[] = [];
    const sink = {
      name: 'buffer',
      write: (records: readonly { sequenceNumber: string }[]) =>
        void buffered.push(...records.map((r) => r.sequenceNumber)),
      flush: () => {
        throw new Error('upload failed');
      },
    };
    const response = await processBatch(
      batch(3, (i) => ({ kind: i === 0 ? 'modify' : 'insert' })),
      {
        ...quiet,
        routes: [{ when: 'insert', to: sink }],
      },
    );
    expect(buffered).toEqual([seq(1), seq(2)]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(1) }]);
  });
});
