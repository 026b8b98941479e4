import { describe, expect, it } from 'vitest';
import { processBatch } from '../../../src/pipeline/index.js';
import { MalformedRecordError } from '../../../src/records/errors.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { DeadLetterSendError } from '../../../src/sinks/errors.js';
import type { DeadLetterEntry } from '../../../src/sinks/types.js';
import {
  batch,
  fakeContext,
  quiet,
  RecordingDeadLetter,
  RecordingSink,
  seq,
  streamRecord,
} from './fixtures.js';

/** A sink that reads every record's new image, so it trips over a malformed one. */
function imageReader(name = 'reads-images'): RecordingSink {
  return new RecordingSink(
    name,
    () => false,
    (records) => {
      for (const r of records) void r.newImage;
    },
  );
}

/** An insert whose new image holds an N that is not a number: valid envelope, malformed inside. */
function badImage(i: number) {
  const record = streamRecord(i);
  (record.dynamodb.NewImage as Record<string, unknown>).n = { N: 'twelve' };
  return record;
}

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

  it('dead-letters at once, never retried, a sequence number that is not digits and a creation time in milliseconds', async () => {
    const sink = new RecordingSink('s');
    const dlq = new RecordingDeadLetter();
    const letters = {
      ...streamRecord(1),
      dynamodb: { ...streamRecord(1).dynamodb, SequenceNumber: 'not-a-number' },
    };
    const millis = streamRecord(2);
    millis.dynamodb.ApproximateCreationDateTime = 1_800_000_000_000;
    const response = await processBatch(
      { Records: [streamRecord(0), letters, millis, streamRecord(3)] },
      { ...quiet, deadLetter: dlq, routes: [{ when: 'insert', to: sink }] },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(sink.calls).toEqual([[seq(0), seq(3)]]);
    expect(dlq.entries.map((e) => [e.sequenceNumber, e.reason, e.attempts])).toEqual([
      ['not-a-number', 'malformed', 0],
      [seq(2), 'malformed', 0],
    ]);
    expect(dlq.entries.map((e) => e.error.message)).toEqual([
      expect.stringContaining('invalid-sequence-number'),
      expect.stringContaining('(milliseconds?)'),
    ]);
  });

  it('with validate: true, dead-letters a record whose attribute values are invalid before any sink', async () => {
    const sink = new RecordingSink('s');
    const dlq = new RecordingDeadLetter();
    const response = await processBatch(
      { Records: [streamRecord(0), badImage(1), streamRecord(2)] },
      { ...quiet, parse: { validate: true }, deadLetter: dlq, routes: [{ when: 'insert', to: sink }] },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(sink.calls).toEqual([[seq(0), seq(2)]]);
    expect(dlq.entries.map((e) => [e.sequenceNumber, e.reason, e.attempts])).toEqual([
      [seq(1), 'malformed', 0],
    ]);
  });

  it('by default leaves images unchecked for a sink that never reads them (the raw record is archived)', async () => {
    const sink = new RecordingSink('raw-archive');
    const dlq = new RecordingDeadLetter();
    const response = await processBatch(
      { Records: [streamRecord(0), badImage(1)] },
      { ...quiet, deadLetter: dlq, routes: [{ when: 'insert', to: sink }] },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(sink.written).toEqual([seq(0), seq(1)]);
    expect(dlq.entries).toEqual([]);
  });

  it('dead-letters a record whose image a sink finds malformed, writes the rest at once, and routes it nowhere else', async () => {
    const reads = imageReader();
    const after = new RecordingSink('after');
    const dlq = new RecordingDeadLetter();
    const metrics: string[] = [];
    const response = await processBatch(
      { Records: [streamRecord(0), badImage(1), streamRecord(2)] },
      {
        ...quiet,
        metrics: { writer: { write: (line: string) => metrics.push(line) } },
        retry: { attempts: 3, baseDelayMs: 60_000, maxDelayMs: 60_000 }, // a backoff would time the test out
        deadLetter: dlq,
        routes: [{ when: 'insert', to: [reads, after] }],
      },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(reads.calls).toEqual([
      [seq(0), seq(1), seq(2)],
      [seq(0), seq(2)],
    ]);
    expect(reads.written).toEqual([seq(0), seq(2)]);
    expect(after.calls).toEqual([[seq(0), seq(2)]]);
    expect(dlq.entries).toMatchObject([
      {
        reason: 'malformed',
        sequenceNumber: seq(1),
        sinkName: 'reads-images',
        attempts: 1,
        record: badImage(1),
        error: { name: 'MalformedRecordError' },
      },
    ]);
    const emf = JSON.parse(metrics[0]!);
    expect([emf.Malformed, emf.DeadLettered, emf.Retries]).toEqual([1, 1, 0]);
  });

  it('dead-letters at once a malformed record a sink reports in `failed`, without retrying it', async () => {
    const calls: string[][] = [];
    const sink = {
      name: 'per-record',
      write(records: readonly ClassifiedRecord[]) {
        calls.push(records.map((r) => r.sequenceNumber));
        const failed = [];
        for (const r of records) {
          try {
            void r.newImage;
          } catch (error) {
            failed.push({ sequenceNumber: r.sequenceNumber, error });
          }
        }
        return { failed };
      },
    };
    const dlq = new RecordingDeadLetter();
    const response = await processBatch(
      { Records: [streamRecord(0), badImage(1)] },
      { ...quiet, deadLetter: dlq, routes: [{ when: 'insert', to: sink }] },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(calls).toEqual([[seq(0), seq(1)]]);
    expect(dlq.entries.map((e) => [e.sequenceNumber, e.reason, e.sinkName])).toEqual([
      [seq(1), 'malformed', 'per-record'],
    ]);
  });

  it('dead-letters a record whose image a kind handler or a route predicate finds malformed', async () => {
    const sink = new RecordingSink('s');
    const handled: string[] = [];
    const dlq = new RecordingDeadLetter();
    const response = await processBatch(
      { Records: [streamRecord(0), badImage(1), streamRecord(2)] },
      {
        ...quiet,
        deadLetter: dlq,
        handlers: {
          insert: (record) => {
            void record.newImage;
            handled.push(record.sequenceNumber);
          },
        },
        routes: [{ when: 'insert', to: sink }],
      },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(handled).toEqual([seq(0), seq(2)]);
    expect(sink.calls).toEqual([[seq(0), seq(2)]]);
    expect(dlq.entries.map((e) => [e.sequenceNumber, e.reason, e.sinkName])).toEqual([
      [seq(1), 'malformed', 'handler:insert'],
    ]);

    const routed = new RecordingSink('big');
    const byPredicate = new RecordingDeadLetter();
    const second = await processBatch(
      { Records: [streamRecord(0), badImage(1)] },
      {
        ...quiet,
        deadLetter: byPredicate,
        routes: [
          { name: 'inserts', when: 'insert', to: new RecordingSink('kinds') },
          { name: 'has-n', when: (r) => r.newImage?.n !== undefined, to: routed },
        ],
      },
    );
    expect(second.batchItemFailures).toEqual([]);
    expect(routed.calls).toEqual([[seq(0)]]);
    expect(byPredicate.entries.map((e) => [e.sequenceNumber, e.reason, e.sinkName])).toEqual([
      [seq(1), 'malformed', 'route:has-n'],
    ]);
  });

  it('treats a MalformedRecordError about a record outside the batch as an ordinary sink failure', async () => {
    const sink = {
      name: 'confused',
      write: () => {
        throw new MalformedRecordError('invalid-number', 'not ours', { sequenceNumber: 'elsewhere' });
      },
    };
    const response = await processBatch(batch(2), { ...quiet, routes: [{ when: 'insert', to: sink }] });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(0) }]);
  });

  it('never drops a lazily found malformed record: without a dead-letter sink it is reported failed', async () => {
    const reads = imageReader();
    const response = await processBatch(
      { Records: [streamRecord(0), badImage(1), streamRecord(2)] },
      { ...quiet, routes: [{ when: 'insert', to: reads }] },
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(1) }]);
    // The rerun takes only what lies before the reported record: Lambda redelivers the rest.
    expect(reads.calls).toEqual([[seq(0), seq(1), seq(2)], [seq(0)]]);
    expect(reads.written).toEqual([seq(0)]);
  });

  it('dead-letters every malformed record a sink finds, one rerun each, and counts them once', async () => {
    const reads = imageReader();
    const dlq = new RecordingDeadLetter();
    const metrics: string[] = [];
    const unparsable = { eventID: 'event-4', eventName: 'UPSERT', dynamodb: { SequenceNumber: seq(4) } };
    const response = await processBatch(
      { Records: [streamRecord(0), badImage(1), badImage(2), streamRecord(3), unparsable] },
      {
        ...quiet,
        metrics: { writer: { write: (line: string) => metrics.push(line) } },
        deadLetter: dlq,
        routes: [{ when: 'insert', to: reads }],
      },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(reads.calls).toEqual([
      [seq(0), seq(1), seq(2), seq(3)],
      [seq(0), seq(2), seq(3)],
      [seq(0), seq(3)],
    ]);
    // Sent in stream order, whichever stage found them.
    expect(dlq.entries.map((e) => [e.sequenceNumber, e.reason])).toEqual([
      [seq(1), 'malformed'],
      [seq(2), 'malformed'],
      [seq(4), 'malformed'],
    ]);
    // Records is the whole batch; the kinds count what parsed; Malformed both kinds of finding.
    const emf = JSON.parse(metrics[0]!);
    expect([emf.Records, emf.Inserts, emf.Malformed, emf.DeadLettered]).toEqual([5, 4, 3, 3]);
  });

  it('starts no rerun past the deadline: the rest is reported for Lambda to redeliver', async () => {
    const reads = imageReader();
    const dlq = new RecordingDeadLetter();
    // 5 s left, margin 1 s, each look at the clock costs 2 s: the sink call starts, its rerun may not.
    const response = await processBatch(
      { Records: [streamRecord(0), badImage(1), streamRecord(2)] },
      { ...quiet, deadlineMarginMs: 1000, deadLetter: dlq, routes: [{ when: 'insert', to: reads }] },
      fakeContext(5000, 2000),
    );
    expect(reads.calls).toEqual([[seq(0), seq(1), seq(2)]]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(0) }]);
    // Record 1 comes again with the redelivery, so it is not dead-lettered now.
    expect(dlq.entries).toEqual([]);
  });

  it("in per-key mode, a malformed record found in one key's lane is dead-lettered and every lane goes on", async () => {
    const reads = imageReader();
    const dlq = new RecordingDeadLetter();
    const bad = badImage(2);
    bad.dynamodb.Keys = { pk: { S: 'item-0' } };
    const response = await processBatch(
      { Records: [streamRecord(0), streamRecord(1), bad, streamRecord(3)] },
      {
        ...quiet,
        ordering: { mode: 'per-key', concurrency: 2 },
        deadLetter: dlq,
        routes: [{ when: 'insert', to: reads }],
      },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect([...reads.written].sort()).toEqual([seq(0), seq(1), seq(3)]);
    expect(dlq.entries.map((e) => [e.sequenceNumber, e.reason])).toEqual([[seq(2), 'malformed']]);
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

  it('holds back the dead letter of a record whose retries ran out past an earlier failure: it is reported, as Lambda redelivers it', async () => {
    // Two lanes (key-0: records 0, 2; key-1: records 1, 3). Record 3's writes keep failing until its
    // attempts run out; record 1 goes to a buffering sink whose flush fails, failing it too.
    const event = batch(4, (i) => ({ pk: `key-${i % 2}`, kind: i === 1 ? 'modify' : 'insert' }));
    const run = async (flushFails: boolean) => {
      const archive = new RecordingSink('archive', (s) => s === seq(3));
      const buffer = {
        name: 'buffer',
        write: () => undefined,
        flush: () => {
          if (flushFails) throw new Error('upload failed');
        },
      };
      const dlq = new RecordingDeadLetter();
      const response = await processBatch(event, {
        ...quiet,
        ordering: { mode: 'per-key', concurrency: 2 },
        deadLetter: dlq,
        routes: [
          { when: 'insert', to: archive },
          { when: 'modify', to: buffer },
        ],
      });
      return { response, archive, dlq };
    };
    const afterFailure = await run(true);
    // Record 3 was given its three attempts, and Lambda delivers it again from record 1 on.
    expect(afterFailure.archive.calls.filter((call) => call.includes(seq(3)))).toHaveLength(3);
    expect(afterFailure.response.batchItemFailures).toEqual([{ itemIdentifier: seq(1) }]);
    expect(afterFailure.dlq.entries).toEqual([]);
    // Alone, it is dead-lettered and the batch succeeds.
    const alone = await run(false);
    expect(alone.response.batchItemFailures).toEqual([]);
    expect(alone.dlq.entries.map((e) => [e.sequenceNumber, e.reason, e.attempts])).toEqual([
      [seq(3), 'retries-exhausted', 3],
    ]);
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

  it('a send that stored some entries fails the batch only from the first entry it did not store', async () => {
    // The sink stores entries up to the first it cannot (as S3DeadLetterSink does) and names the rest.
    const stored: string[] = [];
    const partial = {
      name: 'partial',
      async send(entries: readonly DeadLetterEntry[]) {
        const at = entries.findIndex((e) => e.sequenceNumber === seq(3));
        stored.push(...entries.slice(0, at).map((e) => e.sequenceNumber!));
        throw new DeadLetterSendError(
          'PutObject failed',
          entries.slice(at).map((e) => e.sequenceNumber!),
        );
      },
    };
    const metrics: string[] = [];
    const sink = new RecordingSink('s', (s) => s === seq(1) || s === seq(3) || s === seq(4));
    const response = await processBatch(batch(6), {
      ...quiet,
      metrics: { writer: { write: (line: string) => metrics.push(line) } },
      deadLetter: partial,
      routes: [{ when: 'insert', to: sink }],
    });
    // seq(1)'s entry is stored: it is done, and Lambda resumes at seq(3).
    expect(stored).toEqual([seq(1)]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(3) }]);
    expect(JSON.parse(metrics[0]!).DeadLettered).toBe(1);
  });

  it('a send error that names no record of the batch fails every entry of the send', async () => {
    const sink = new RecordingSink('s', (s) => s === seq(1) || s === seq(3));
    for (const error of [
      new Error('queue unavailable'),
      new DeadLetterSendError('odd', ['not-in-this-batch']),
      new DeadLetterSendError('odd', []),
    ]) {
      const response = await processBatch(batch(5), {
        ...quiet,
        deadLetter: {
          name: 'fails',
          send: async () => {
            throw error;
          },
        },
        routes: [{ when: 'insert', to: sink }],
      });
      expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(1) }]);
    }
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

  it('flushes only the sinks that were written to, each once, after a failed flush of an earlier sink too', async () => {
    const flushed: string[] = [];
    const buffering = (name: string, fails: boolean) => ({
      name,
      write: () => undefined,
      flush: () => {
        flushed.push(name);
        if (fails) throw new Error(`${name} upload failed`);
      },
    });
    const response = await processBatch(
      batch(4, (i) => ({ kind: i < 2 ? 'modify' : 'insert' })),
      {
        ...quiet,
        routes: [
          { name: 'unused', when: 'user-delete', to: buffering('unused', false) },
          { name: 'plain', when: 'modify', to: { name: 'plain', write: () => undefined } },
          { name: 'inserts', when: 'insert', to: buffering('inserts', true) },
          { name: 'modifies', when: 'modify', to: buffering('modifies', false) },
        ],
      },
    );
    expect(flushed).toEqual(['inserts', 'modifies']);
    // The failed flush fails from the first record its sink was given.
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(2) }]);
  });
});
