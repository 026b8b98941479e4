import { afterEach, describe, expect, it, vi } from 'vitest';
import { FilterCriteriaError } from '../../../../src/filters/index.js';
import { ManualClock } from '../../../../src/local/emulator/clock.js';
import { MemoryFailureDestination } from '../../../../src/local/emulator/destinations.js';
import { EventSourceMappingEmulator } from '../../../../src/local/emulator/emulator.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import { INVOCATION_PAYLOAD_LIMIT_BYTES } from '../../../../src/local/emulator/payload-limit.js';
import { STREAM_RETENTION_MS } from '../../../../src/local/emulator/record-age.js';
import type { LambdaStreamRecord } from '../../../../src/records/types.js';

// Each scenario names the Lambda developer guide page it checks. These are the rules issue 16
// found the emulator getting wrong; the rest are in emulator.test.ts and emulator-stall.test.ts.

function records(count: number, now = 1_767_225_600): LambdaStreamRecord[] {
  const builder = new StreamEventBuilder({ now });
  return Array.from({ length: count }, (_, i) => builder.insert({ pk: `item-${i + 1}` }));
}

const keysOf = (input: readonly LambdaStreamRecord[]) => input.map((r) => r.dynamodb.Keys.pk?.S);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the 6 MB invocation payload (Lambda event source mappings, batching behavior: "The payload size reaches 6 MB")', () => {
  it('cuts a batch of three 2.5 MB records (BatchSize 100) into 5 MB and 2.5 MB invocations', async () => {
    const builder = new StreamEventBuilder({ streamViewType: 'NEW_IMAGE' });
    const blob = 'x'.repeat(2.5 * 1024 * 1024);
    const input = [1, 2, 3].map((n) => builder.insert({ pk: `big-${n}`, blob }));
    const invocations: { keys: (string | undefined)[]; bytes: number }[] = [];
    await new EventSourceMappingEmulator({
      batchSize: 100,
      handler: async (event) => {
        invocations.push({ keys: keysOf(event.Records), bytes: Buffer.byteLength(JSON.stringify(event)) });
      },
    }).runRecords(input);
    expect(invocations.map((i) => i.keys)).toEqual([['big-1', 'big-2'], ['big-3']]);
    for (const { bytes } of invocations) expect(bytes).toBeLessThanOrEqual(INVOCATION_PAYLOAD_LIMIT_BYTES);
  });

  it('keeps small records together up to BatchSize', async () => {
    const sizes: number[] = [];
    await new EventSourceMappingEmulator({
      batchSize: 100,
      handler: async (event) => {
        sizes.push(event.Records.length);
      },
    }).runRecords(records(250));
    expect(sizes).toEqual([100, 100, 50]);
  });
});

describe('BisectBatchOnFunctionError with ReportBatchItemFailures (Configuring partial batch response with DynamoDB and Lambda, "Bisecting a batch")', () => {
  it('bisects at the returned sequence number without using a retry: record 3 of 4 reported, maximumRetryAttempts 0, [3,4] is retried', async () => {
    const input = records(4);
    const seq = input.map((r) => r.dynamodb.SequenceNumber);
    const batches: (string | undefined)[][] = [];
    const destination = new MemoryFailureDestination();
    const mapping = new EventSourceMappingEmulator({
      reportBatchItemFailures: true,
      bisectBatchOnFunctionError: true,
      maximumRetryAttempts: 0,
      onFailure: destination,
      handler: async (event) => {
        batches.push(keysOf(event.Records));
        return batches.length === 1
          ? { batchItemFailures: [{ itemIdentifier: seq[2] as string }] }
          : undefined;
      },
    });
    const result = await mapping.runRecords(input);
    expect(batches).toEqual([
      ['item-1', 'item-2', 'item-3', 'item-4'],
      ['item-3', 'item-4'],
    ]);
    expect(
      mapping.log.filter((e) => e.type === 'bisect').map((e) => (e as { sizes: number[] }).sizes),
    ).toEqual([[2, 2]]);
    expect(destination.records).toEqual([]);
    expect(result.checkpoint).toBe(seq[3]);
  });

  it('isolates the record always reported: with 1 retry only record 2 reaches the destination, 3 and 4 are processed', async () => {
    const input = records(4);
    const seq = input.map((r) => r.dynamodb.SequenceNumber);
    const batches: (string | undefined)[][] = [];
    const destination = new MemoryFailureDestination();
    const result = await new EventSourceMappingEmulator({
      reportBatchItemFailures: true,
      bisectBatchOnFunctionError: true,
      maximumRetryAttempts: 1,
      onFailure: destination,
      handler: async (event) => {
        batches.push(keysOf(event.Records));
        const reported = event.Records.some((r) => r.dynamodb.SequenceNumber === seq[1]);
        return { batchItemFailures: reported ? [{ itemIdentifier: seq[1] as string }] : [] };
      },
    }).runRecords(input);
    expect(batches).toEqual([
      ['item-1', 'item-2', 'item-3', 'item-4'],
      // Split at the returned record: [1] is done, [2,3,4] goes on with its retries untouched.
      ['item-2', 'item-3', 'item-4'],
      // Failing at its first record is a failed invocation: bisected like a function error.
      ['item-2', 'item-3'],
      ['item-2'],
      ['item-2'],
      ['item-3'],
      ['item-4'],
    ]);
    expect(
      destination.records.map((r) => [
        r.DDBStreamBatchInfo.startSequenceNumber,
        r.DDBStreamBatchInfo.batchSize,
      ]),
    ).toEqual([[seq[1], 1]]);
    expect(result).toMatchObject({ discarded: 1, checkpoint: seq[3] });
  });
});

describe('MaximumBatchingWindowInSeconds (Lambda event source mappings, batching behavior: "the next batching window begins as soon as the previous function invocation completes")', () => {
  it('opens the next window when the previous invocation completes, not at the first buffered record', async () => {
    const clock = new ManualClock(0);
    const builder = new StreamEventBuilder();
    const invokedAt: number[] = [];
    const mapping = new EventSourceMappingEmulator({
      maximumBatchingWindowInSeconds: 5,
      clock,
      handler: async () => {
        invokedAt.push(clock.now());
        clock.advance(3_000); // the invocation takes 3 s: it completes at 8 s
      },
    });
    async function* pages() {
      yield [builder.insert({ pk: 'a' })]; // 0 s: the first window opens with the first record
      clock.set(5_000);
      yield []; // 5 s: the window has passed, [a] is invoked, completes at 8 s
      clock.set(9_000);
      yield [builder.insert({ pk: 'b' })]; // 9 s: buffered in the window opened at 8 s
      clock.set(13_000);
      yield []; // 13 s: 5 s after the completion, [b] is invoked (from its arrival, not before 14 s)
      clock.set(13_500);
      yield [builder.insert({ pk: 'c' })];
    }
    await mapping.runShard({ shardId: 's', streamArn: builder.streamArn, pages: pages() });
    expect(invokedAt.slice(0, 2)).toEqual([5_000, 13_000]);
  });

  it('does not open a window while an invocation is still running: records left after a full batch wait from its completion', async () => {
    const clock = new ManualClock(0);
    const builder = new StreamEventBuilder();
    const invocations: [number, (string | undefined)[]][] = [];
    const mapping = new EventSourceMappingEmulator({
      maximumBatchingWindowInSeconds: 1,
      batchSize: 2,
      clock,
      handler: async (event) => {
        invocations.push([clock.now(), keysOf(event.Records)]);
        clock.advance(500);
      },
    });
    async function* pages() {
      // [a, b] is a full batch, invoked at once (done at 0.5 s); c waits for the next window.
      yield [builder.insert({ pk: 'a' }), builder.insert({ pk: 'b' }), builder.insert({ pk: 'c' })];
      clock.set(1_000);
      yield []; // 1 s after c arrived, but only 0.5 s after the invocation completed
      clock.set(1_500);
      yield [];
    }
    await mapping.runShard({ shardId: 's', streamArn: builder.streamArn, pages: pages() });
    expect(invocations).toEqual([
      [0, ['a', 'b']],
      [1_500, ['c']],
    ]);
  });
});

describe('FilterCriteria (Control which events Lambda sends to your function: "By default, you can have five different filters per event source")', () => {
  const pattern = (n: number) => ({ dynamodb: { Keys: { pk: { S: [`item-${n}`] } } } });
  const handler = async () => undefined;

  it('refuses a sixth filter under the default quota, as CreateEventSourceMapping does', () => {
    const patterns = [1, 2, 3, 4, 5, 6].map(pattern);
    expect(() => new EventSourceMappingEmulator({ handler, filterPatterns: patterns })).toThrow(
      FilterCriteriaError,
    );
    expect(() => new EventSourceMappingEmulator({ handler, filterPatterns: patterns })).toThrow(
      /6 filter patterns, but the mapping allows 5 .*then pass maxFilters/,
    );
  });

  it('takes up to 10 with a raised quota (maxFilters), never more', async () => {
    const patterns = Array.from({ length: 10 }, (_, i) => pattern(i + 1));
    const seen: (string | undefined)[] = [];
    await new EventSourceMappingEmulator({
      maxFilters: 10,
      filterPatterns: patterns,
      handler: async (event) => {
        seen.push(...keysOf(event.Records));
      },
    }).runRecords(records(12));
    expect(seen).toHaveLength(10);
    expect(() => new EventSourceMappingEmulator({ handler, maxFilters: 11 })).toThrow(/maxFilters/);
  });

  it('warns about numeric on an N attribute: Lambda takes it, and it never matches', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    new EventSourceMappingEmulator({
      handler,
      filterPatterns: [{ dynamodb: { NewImage: { price: { N: [{ numeric: ['>', 10] }] } } } }],
    });
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(
        /^filter 0: dynamodb\.NewImage\.price\.N\[0\]: numeric never matches an? N value/,
      ),
      { code: 'TIDEWATER_FILTER_NEVER_MATCHES' },
    );
  });
});

describe('partial batch responses (Configuring partial batch response with DynamoDB and Lambda, success and failure conditions)', () => {
  it('a response that is a string fails the batch instead of counting as success', async () => {
    const input = records(2);
    const destination = new MemoryFailureDestination();
    const mapping = new EventSourceMappingEmulator({
      reportBatchItemFailures: true,
      maximumRetryAttempts: 0,
      onFailure: destination,
      handler: async () => 'done' as never,
    });
    const result = await mapping.runRecords(input);
    expect(mapping.log.find((e) => e.type === 'response')).toMatchObject({
      outcome: 'invalid-response',
      error: 'the response is the string "done", not a partial batch response ({ batchItemFailures: [...] })',
    });
    expect(result.discarded).toBe(2);
  });

  it('a numeric itemIdentifier fails the batch with a message saying it is a number', async () => {
    const input = records(1);
    const mapping = new EventSourceMappingEmulator({
      reportBatchItemFailures: true,
      maximumRetryAttempts: 0,
      // A handler that parsed the sequence number as a number (and lost its last digit doing so).
      handler: async () => ({
        batchItemFailures: [{ itemIdentifier: Number(input[0]?.dynamodb.SequenceNumber) as never }],
      }),
    });
    await mapping.runRecords(input);
    expect(mapping.log.find((e) => e.type === 'response')).toMatchObject({
      outcome: 'invalid-response',
      error: expect.stringMatching(/^itemIdentifier number 100000000000000000000 is not a string/),
    });
  });
});

describe('the stream\'s 24-hour retention (DynamoDB event source mapping parameters: "-1 means infinite: failed records are retried until the record expires. The data retention limit for DynamoDB Streams is 24 hours")', () => {
  it('ends unbounded retries with unbounded age when the records leave the stream, 24 h after they were written', async () => {
    const start = Date.UTC(2026, 0, 1);
    const clock = new ManualClock(start);
    const input = records(2, start / 1000);
    const destination = new MemoryFailureDestination();
    let calls = 0;
    const mapping = new EventSourceMappingEmulator({
      clock,
      retryDelayMs: 60 * 60 * 1000,
      stallAfterAttempts: Number.POSITIVE_INFINITY,
      onFailure: destination,
      handler: async () => {
        calls++;
        throw new Error('down');
      },
    });
    const result = await mapping.runRecords(input);
    // Attempts at 0 h, 1 h, …, 23 h; at 24 h the records are trimmed from the stream.
    expect(calls).toBe(24);
    expect(clock.now() - start).toBe(STREAM_RETENTION_MS);
    expect(mapping.log.filter((e) => e.type === 'expired')).toEqual([
      {
        type: 'expired',
        shardId: 'shardId-local-0',
        lane: 0,
        sequenceNumbers: input.map((r) => r.dynamodb.SequenceNumber),
      },
    ]);
    // Lambda can no longer read them: nothing for an on-failure destination, and the shard moves on.
    expect(destination.records).toEqual([]);
    expect(result).toMatchObject({ expired: 2, discarded: 2, checkpoint: input[1]?.dynamodb.SequenceNumber });
  });

  it('counts the retention from the first delivery for a record whose time is already more than a day old (built events, old captures)', async () => {
    const clock = new ManualClock(Date.UTC(2030, 0, 1));
    const input = records(1, Date.UTC(2026, 0, 1) / 1000);
    let calls = 0;
    const result = await new EventSourceMappingEmulator({
      clock,
      retryDelayMs: 6 * 60 * 60 * 1000,
      stallAfterAttempts: Number.POSITIVE_INFINITY,
      handler: async () => {
        calls++;
        throw new Error('down');
      },
    }).runRecords(input);
    expect(calls).toBe(4);
    expect(result.expired).toBe(1);
  });
});
