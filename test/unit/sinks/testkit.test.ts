import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { MemorySink } from '../../../src/sinks/index.js';
import { runSinkTestKit, type SinkTestKitOptions, sinkTestKitCases } from '../../../src/sinks/testkit.js';
import type { Sink, SinkResult } from '../../../src/sinks/types.js';

/** Runs every case; returns the titles of those that failed. */
async function failingCases<S extends Sink>(options: SinkTestKitOptions<S>): Promise<string[]> {
  const failed: string[] = [];
  for (const c of sinkTestKitCases(options)) {
    await c.run().catch(() => failed.push(c.title));
  }
  return failed;
}

/** Runs every case; returns each failing case's title, message and the sink it ran on. */
async function failures<S extends Sink>(options: SinkTestKitOptions<S>) {
  const out: { title: string; message: string; sink: S }[] = [];
  let current: S | undefined;
  const create = options.create;
  for (const c of sinkTestKitCases({ ...options, create: async () => (current = await create()) })) {
    await c
      .run()
      .catch((error: Error) => out.push({ title: c.title, message: error.message, sink: current! }));
  }
  return out;
}

const SEQUENCE_NUMBER = /\d{21}/g;

/** Idempotent, but skips the second record of every write while reporting it written. */
class SkippingSink implements Sink {
  readonly name = 'skipping';
  readonly held = new MemorySink();
  readonly skipped = new Set<string>();
  write(records: readonly ClassifiedRecord[]): SinkResult {
    const skip = records[1];
    if (skip !== undefined) this.skipped.add(skip.sequenceNumber);
    return this.held.write(records.filter((r) => r !== skip));
  }

  /** Skipped and not stored by a later delivery either. */
  lost(): string[] {
    const stored = new Set(this.held.records.map((r) => r.sequenceNumber));
    return [...this.skipped].filter((seq) => !stored.has(seq)).sort();
  }
}

/** Appends every delivery and skips its second record: duplicates and losses at once. */
class SkippingAppendingSink implements Sink {
  readonly name = 'skipping-appending';
  readonly held: ClassifiedRecord[] = [];
  write(records: readonly ClassifiedRecord[]): SinkResult {
    this.held.push(...records.filter((_, i) => i !== 1));
    return {};
  }
}

/** Stores each write's records last first. */
class ReversingSink implements Sink {
  readonly name = 'reversing';
  readonly held: ClassifiedRecord[] = [];
  write(records: readonly ClassifiedRecord[]): SinkResult {
    this.held.push(...[...records].reverse());
    return {};
  }
}

/** Reports success and stores nothing. */
class DroppingSink implements Sink {
  readonly name = 'dropping';
  readonly held: ClassifiedRecord[] = [];
  write(): SinkResult {
    return {};
  }
}

/** Appends every delivery: not idempotent. */
class AppendingSink implements Sink {
  readonly name = 'appending';
  readonly held: ClassifiedRecord[] = [];
  write(records: readonly ClassifiedRecord[]): SinkResult {
    this.held.push(...records);
    return {};
  }
}

/** Throws on every other call (a lost connection, say), as the contract allows: a throw fails the batch. */
class FlakyThrowingSink implements Sink {
  readonly name = 'flaky-throwing';
  readonly held = new MemorySink();
  #calls = 0;
  write(records: readonly ClassifiedRecord[]): SinkResult {
    if (records.length > 0 && this.#calls++ % 2 === 0) throw new Error('connection reset');
    return this.held.write(records);
  }
}

/** Never stores anything and says so by throwing. */
class AlwaysThrowingSink implements Sink {
  readonly name = 'always-throwing';
  write(): SinkResult {
    throw new Error('store is down');
  }
}

describe('runSinkTestKit', () => {
  it('requires read, at runtime too', () => {
    const options = { name: 'no read', create: () => new MemorySink() };
    expect(() => runSinkTestKit(options as never)).toThrow(InvalidOptionsError);
    expect(() => sinkTestKitCases(options as never)).toThrow(/'read'/);
    expect(() => sinkTestKitCases({ ...options, read: 'records' } as never)).toThrow(/'read'/);
  });

  it('rejects unknown and malformed options', () => {
    const base = { name: 'x', create: () => new MemorySink(), read: (s: MemorySink) => s.records };
    expect(() => sinkTestKitCases({ ...base, reed: () => [] } as never)).toThrow(InvalidOptionsError);
    expect(() => sinkTestKitCases({ ...base, largeBatch: 0 })).toThrow(/largeBatch/);
    expect(() => sinkTestKitCases({ ...base, injectFailures: true } as never)).toThrow(/injectFailures/);
    expect(() => sinkTestKitCases({ ...base, name: '' })).toThrow(/name/);
  });

  it('passes a correct sink on every case, the failure-injection case included', async () => {
    const failOnce = new Set<string>();
    const cases = sinkTestKitCases({
      name: 'memory',
      create: () => {
        failOnce.clear();
        return new MemorySink({ failWhen: (r) => failOnce.delete(r.sequenceNumber) });
      },
      read: (sink) => sink.records,
      injectFailures: (_sink, seqs) => {
        for (const seq of seqs) failOnce.add(seq);
      },
      largeBatch: 200,
    });
    expect(cases).toHaveLength(7);
    for (const c of cases) await c.run();
  });

  it('fails a sink that reports success and stores nothing', async () => {
    const failed = await failingCases({
      name: 'dropping',
      create: () => new DroppingSink(),
      read: (sink) => sink.held,
      largeBatch: 100,
    });
    expect(failed).toEqual([
      'stores every record once, in stream order',
      'is idempotent when the same batch is delivered twice',
      'is idempotent when a redelivery is cut at a different point',
      'reports failures only as records of the batch and drops nothing silently',
      'stores a large batch (100 records)',
    ]);
  });

  it('says a sink that stores nothing dropped every record, naming them, not that it duplicated any', async () => {
    const failed = await failures({
      name: 'dropping',
      create: () => new DroppingSink(),
      read: (sink) => sink.held,
      largeBatch: 100,
    });
    expect(failed.map((f) => f.message)).toEqual([
      expect.stringMatching(
        /^after one delivery: 50 of 50 records missing: .*\(dropped\): \d{21}, .* and 40 more$/,
      ),
      expect.stringMatching(/^after the same batch was delivered twice: 40 of 40 records missing/),
      expect.stringMatching(/^after redeliveries cut at other points: 60 of 60 records missing/),
      expect.stringMatching(/^25 of 25 records neither stored nor reported failed \(dropped\)/),
      expect.stringMatching(/^after a batch of 100 records: 100 of 100 records missing/),
    ]);
    for (const { message } of failed) expect(message).not.toMatch(/duplicate|more than once/);
  });

  it('names exactly the records a sink dropped, in every case that catches it, and calls none a duplicate', async () => {
    const failed = await failures({
      name: 'skipping',
      create: () => new SkippingSink(),
      read: (sink) => sink.held.records,
      largeBatch: 100,
    });
    expect(failed.map((f) => f.title)).toEqual([
      'stores every record once, in stream order',
      'is idempotent when the same batch is delivered twice',
      'is idempotent when a redelivery is cut at a different point',
      'reports failures only as records of the batch and drops nothing silently',
      'stores a large batch (100 records)',
    ]);
    for (const { message, sink } of failed) {
      expect(sink.lost().length).toBeGreaterThan(0);
      expect([...(message.match(SEQUENCE_NUMBER) ?? [])].sort()).toEqual(sink.lost());
      expect(message).toMatch(/dropped/);
      expect(message).not.toMatch(/duplicate|more than once/);
    }
  });

  it('names both problems when one sink drops some records and duplicates others', async () => {
    const failed = await failures({
      name: 'skipping-appending',
      create: () => new SkippingAppendingSink(),
      read: (sink) => sink.held,
      largeBatch: 100,
    });
    const cut = failed.find((f) => f.title === 'is idempotent when a redelivery is cut at a different point');
    expect(cut?.message).toMatch(
      /^after redeliveries cut at other points: 1 of 60 records missing: .*\(dropped\): \d{21}; \d+ records stored more than once \(duplicates\): \d{21} \(2 times\)/,
    );
  });

  it('reports a sink that stores every record once but out of order as out of order', async () => {
    const failed = await failures({
      name: 'reversing',
      create: () => new ReversingSink(),
      read: (sink) => sink.held,
      largeBatch: 100,
    });
    const [first] = failed;
    expect(first?.title).toBe('stores every record once, in stream order');
    expect(first?.message).toMatch(
      /^after one delivery: records out of stream order: position 0 holds (\d{21}) where (?!\1)\d{21} belongs$/,
    );
  });

  it('fails a sink that stores redelivered records again', async () => {
    const failed = await failingCases({
      name: 'appending',
      create: () => new AppendingSink(),
      read: (sink) => sink.held,
      largeBatch: 100,
    });
    expect(failed).toEqual([
      'is idempotent when the same batch is delivered twice',
      'is idempotent when a redelivery is cut at a different point',
    ]);
    const messages = (
      await failures({
        name: 'appending',
        create: () => new AppendingSink(),
        read: (sink) => sink.held,
        largeBatch: 100,
      })
    ).map((f) => f.message);
    expect(messages).toEqual([
      expect.stringMatching(
        /^after the same batch was delivered twice: 40 records stored more than once \(duplicates\): \d{21} \(2 times\)/,
      ),
      expect.stringMatching(
        /^after redeliveries cut at other points: \d+ records stored more than once \(duplicates\)/,
      ),
    ]);
    for (const message of messages) expect(message).not.toMatch(/missing|dropped/);
  });

  it('passes a sink that throws transiently, redelivering the whole batch as Lambda does', async () => {
    const failed = await failingCases({
      name: 'flaky',
      create: () => new FlakyThrowingSink(),
      read: (sink) => sink.held.records,
      largeBatch: 100,
    });
    expect(failed).toEqual([]);
  });

  it('fails a sink that keeps throwing, naming its last error', async () => {
    const messages: string[] = [];
    for (const c of sinkTestKitCases({
      name: 'down',
      create: () => new AlwaysThrowingSink(),
      read: () => [],
      largeBatch: 100,
    })) {
      await c.run().catch((error: Error) => messages.push(error.message));
    }
    // A throw on an empty batch is not a delivery failure Lambda retries: that case fails on it as is.
    expect(messages[0]).toBe('store is down');
    // "Reports failures" passes: a throw reports every record failed. The rest name the cause.
    expect(messages.slice(1)).toHaveLength(4);
    for (const message of messages.slice(1))
      expect(message).toMatch(/still failing after 5 deliveries.*store is down/);
  });

  it('fails a sink that ignores the failures injected into it', async () => {
    const failed = await failingCases({
      name: 'ignores injection',
      create: () => new MemorySink(),
      read: (sink) => sink.records,
      injectFailures: () => undefined,
      largeBatch: 100,
    });
    expect(failed).toEqual(['reports injected failures, then stores everything once after the redelivery']);
  });
});
