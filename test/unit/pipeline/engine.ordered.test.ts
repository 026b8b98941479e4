import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { InvalidPatternError, matching } from '../../../src/filters/index.js';
import { createPipeline, processBatch, UnreadableSequenceNumberError } from '../../../src/pipeline/index.js';
import { NotAStreamEventError } from '../../../src/records/errors.js';
import { batch, quiet, RecordingDeadLetter, RecordingSink, seq, streamRecord } from './fixtures.js';

describe('ordered mode', () => {
  it('calls each sink once with its records in stream order and reports nothing when all succeed', async () => {
    const inserts = new RecordingSink('inserts');
    const deletes = new RecordingSink('deletes');
    const pipeline = createPipeline({
      ...quiet,
      routes: [
        { when: 'insert', to: inserts },
        { when: ['user-delete', 'ttl-delete'], to: deletes },
      ],
    });
    const event = batch(6, (i) => ({
      kind: i % 2 === 0 ? 'insert' : i % 3 === 0 ? 'ttl-delete' : 'user-delete',
    }));
    const response = await pipeline.process(event);
    expect(response).toEqual({ batchItemFailures: [] });
    expect(inserts.calls).toEqual([[seq(0), seq(2), seq(4)]]);
    expect(deletes.calls).toEqual([[seq(1), seq(3), seq(5)]]);
  });

  it('reports the failed record and does not send later records to sinks not yet called', async () => {
    const first = new RecordingSink('first', (s) => s === seq(3));
    const second = new RecordingSink('second');
    const response = await processBatch(batch(8), {
      ...quiet,
      retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      routes: [{ when: 'insert', to: [first, second] }],
    });
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: seq(3) }] });
    expect(first.calls).toEqual([[0, 1, 2, 3, 4, 5, 6, 7].map(seq)]);
    expect(second.calls).toEqual([[seq(0), seq(1), seq(2)]]);
  });

  it('maps partial failures of a sink to the lowest failed record, across sinks', async () => {
    const a = new RecordingSink('a', (s) => s === seq(5) || s === seq(7));
    const b = new RecordingSink('b', (s) => s === seq(2));
    const response = await processBatch(batch(10), {
      ...quiet,
      retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      routes: [
        { when: (r) => r.eventName === 'INSERT', to: a }, // a predicate route, taking every record here
        { when: 'insert', to: b },
      ],
    });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(2) }]);
    expect(a.calls).toEqual([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(seq)]);
    // b ran after a's failure at 5, so it was only given records before it.
    expect(b.calls).toEqual([[seq(0), seq(1), seq(2), seq(3), seq(4)]]);
  });

  it('treats a thrown sink as failing every record it was given', async () => {
    const down = new RecordingSink('down', () => 'throw');
    const response = await processBatch(
      batch(4, (i) => ({ kind: i < 2 ? 'modify' : 'insert' })),
      {
        ...quiet,
        retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
        routes: [{ when: 'insert', to: down }],
      },
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(2) }]);
  });

  it('retries only the failed records and succeeds when the failure is transient', async () => {
    const flaky = new RecordingSink('flaky', (s, attempt) => s === seq(1) && attempt < 3);
    const dlq = new RecordingDeadLetter();
    const response = await processBatch(batch(3), {
      ...quiet,
      deadLetter: dlq,
      routes: [{ when: 'insert', to: flaky }],
    });
    expect(response.batchItemFailures).toEqual([]);
    expect(flaky.calls).toEqual([[seq(0), seq(1), seq(2)], [seq(1)], [seq(1)]]);
    expect(dlq.entries).toEqual([]);
  });

  it('fails the whole batch when a sequence number is unreadable, instead of returning a bad identifier', async () => {
    const sink = new RecordingSink('s');
    const records = [
      streamRecord(0),
      { ...streamRecord(1), dynamodb: { ...streamRecord(1).dynamodb, SequenceNumber: '' } },
    ];
    await expect(
      processBatch({ Records: records }, { ...quiet, routes: [{ when: 'insert', to: sink }] }),
    ).rejects.toThrow(UnreadableSequenceNumberError);
    await expect(
      processBatch(
        { Records: [streamRecord(0), null] },
        { ...quiet, routes: [{ when: 'insert', to: sink }] },
      ),
    ).rejects.toMatchObject({ name: 'UnreadableSequenceNumberError', index: 1 });
    expect(sink.calls).toEqual([]);
  });

  it('fails the whole batch for input that is not a stream batch', async () => {
    const sink = new RecordingSink('s');
    await expect(
      processBatch(
        { Records: [{ eventSource: 'aws:sqs', body: 'x' }] },
        { ...quiet, routes: [{ when: 'insert', to: sink }] },
      ),
    ).rejects.toThrow(NotAStreamEventError);
  });

  it('treats a failure for a sequence number the sink was not given as failing its whole batch', async () => {
    const liar = {
      name: 'liar',
      write: () => ({ failed: [{ sequenceNumber: 'not-in-batch', error: new Error('x') }] }),
    };
    const response = await processBatch(batch(3), {
      ...quiet,
      retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      routes: [{ when: 'insert', to: liar }],
    });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(0) }]);
  });

  it('runs per-kind handlers in stream order with the narrowed record', async () => {
    const seen: string[] = [];
    const response = await processBatch(
      batch(4, (i) => ({ kind: i % 2 ? 'ttl-delete' : 'insert' })),
      {
        ...quiet,
        handlers: {
          'ttl-delete': (record) => {
            // The narrowed type: eventName can only be REMOVE here.
            const name: 'REMOVE' = record.eventName;
            seen.push(`${name}:${record.sequenceNumber}`);
          },
        },
      },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(seen).toEqual([`REMOVE:${seq(1)}`, `REMOVE:${seq(3)}`]);
  });

  it('a failing handler stops the batch at its record', async () => {
    const sink = new RecordingSink('s');
    const response = await processBatch(batch(5), {
      ...quiet,
      retry: { attempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
      routes: [{ when: 'insert', to: sink }],
      handlers: {
        insert: (record) => {
          if (record.sequenceNumber === seq(2)) throw new Error('handler broke');
        },
      },
    });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(2) }]);
    expect(sink.calls).toEqual([[seq(0), seq(1)]]);
  });

  it('fails the record of an async handler that rejects, like one that throws', async () => {
    const sink = new RecordingSink('s');
    const seen: string[] = [];
    const response = await processBatch(batch(4), {
      ...quiet,
      retry: { attempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
      routes: [{ when: 'insert', to: sink }],
      handlers: {
        insert: async (record) => {
          seen.push(record.sequenceNumber);
          await Promise.resolve();
          if (record.sequenceNumber === seq(1)) throw new Error('handler broke later');
        },
      },
    });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(1) }]);
    // Tried twice (the retry), then nothing after it ran.
    expect(seen).toEqual([seq(0), seq(1), seq(1)]);
    expect(sink.calls).toEqual([[seq(0)]]);
  });

  it('rejects unknown config keys, listing the valid ones', () => {
    expect(() => createPipeline({ ...quiet, routes: [], rotes: [] } as never)).toThrow(InvalidOptionsError);
    expect(() => createPipeline({ ...quiet, rotes: [] } as never)).toThrow(
      /unknown option 'rotes' \(known: routes, handlers/,
    );
    expect(() =>
      createPipeline({ ...quiet, routes: [{ when: 'ttl-deletes' as never, to: new RecordingSink('s') }] }),
    ).toThrow(/unknown kind "ttl-deletes"/);
    expect(() =>
      createPipeline({
        ...quiet,
        routes: [{ when: 'insert', to: new RecordingSink('s'), sink: 1 } as never],
      }),
    ).toThrow(/unknown option 'routes\[0\]\.sink' \(known: name, when, entity, item, images, to\)/);
    expect(() => createPipeline({ ...quiet, retry: { attemps: 2 } as never, routes: [] })).toThrow(
      InvalidOptionsError,
    );
    expect(() => createPipeline({ ...quiet, routes: [] })).toThrow(/at least one route or handler/);
    expect(() =>
      createPipeline({
        ...quiet,
        ordering: { mode: 'per-key', concurrency: 0 },
        routes: [{ when: 'insert', to: new RecordingSink('s') }],
      }),
    ).toThrow(/option 'ordering.concurrency' must be an integer in \[1, ∞\), got number 0/);
  });

  it('routes by filter pattern against the record as Lambda delivers it', async () => {
    const big = new RecordingSink('big');
    const response = await processBatch(batch(6), {
      ...quiet,
      // Lambda's filters see N as a string: numeric operators do not apply to it, exact strings do.
      routes: [
        {
          when: matching({ eventName: ['INSERT'], dynamodb: { NewImage: { n: { N: ['4', '5'] } } } }),
          to: big,
        },
      ],
    });
    expect(response.batchItemFailures).toEqual([]);
    expect(big.calls).toEqual([[seq(4), seq(5)]]);
  });

  it('refuses a bare filter pattern as a route condition, saying to write matching(pattern)', () => {
    const sink = new RecordingSink('s');
    const bare = { eventName: ['INSERT'] };
    expect(() => createPipeline({ ...quiet, routes: [{ when: bare as never, to: sink }] })).toThrow(
      InvalidOptionsError,
    );
    expect(() => createPipeline({ ...quiet, routes: [{ when: bare as never, to: sink }] })).toThrow(
      /routes\[0\]\.when: a filter pattern object is not a route condition; write when: matching\(pattern\)/,
    );
    // matching() compiles, so a bad pattern fails where the route is written.
    expect(() => matching({ eventName: 'INSERT' } as never)).toThrow(InvalidPatternError);
    expect(() => matching('{"eventName":["INSERT"]}')).not.toThrow();
  });
});
