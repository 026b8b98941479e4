import type { DynamoDBBatchResponse } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../src/local/emulator/clock.js';
import { MemoryFailureDestination } from '../../../../src/local/emulator/destinations.js';
import {
  type EmulatorEvent,
  EventSourceMappingEmulator,
  type StreamHandler,
} from '../../../../src/local/emulator/emulator.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import type { LambdaStreamEvent, LambdaStreamRecord } from '../../../../src/records/types.js';

function records(
  count: number,
  options: { now?: number; keys?: (i: number) => string } = {},
): LambdaStreamRecord[] {
  const builder = new StreamEventBuilder({ now: options.now ?? 1_767_225_600 });
  return Array.from({ length: count }, (_, i) =>
    builder.insert({ pk: options.keys?.(i) ?? `item-${i + 1}`, n: i + 1 }),
  );
}

function recorder() {
  const batches: string[][] = [];
  const seqOf = (event: LambdaStreamEvent) => event.Records.map((r) => r.dynamodb.SequenceNumber);
  return { batches, seqOf };
}

const events = (log: EmulatorEvent[], type: EmulatorEvent['type']) => log.filter((e) => e.type === type);

describe('EventSourceMappingEmulator', () => {
  it('delivers batches of BatchSize in shard order and checkpoints the last record', async () => {
    const input = records(10);
    const seen: string[][] = [];
    const emulator = new EventSourceMappingEmulator({
      batchSize: 4,
      handler: async (event) => {
        seen.push(event.Records.map((r) => r.dynamodb.SequenceNumber));
      },
    });
    const checkpoints: string[] = [];
    const result = await emulator.runShard({
      shardId: 's-1',
      streamArn: input[0]?.eventSourceARN ?? '',
      pages: [input],
      onCheckpoint: (s) => {
        checkpoints.push(s);
      },
    });
    const all = input.map((r) => r.dynamodb.SequenceNumber);
    expect(seen).toEqual([all.slice(0, 4), all.slice(4, 8), all.slice(8)]);
    expect(result.checkpoint).toBe(all[9]);
    expect(checkpoints.at(-1)).toBe(all[9]);
    expect(result.invocations).toBe(3);
  });

  it('ReportBatchItemFailures: a failure at record 7 of 10 redelivers 7–10 and not 1–6', async () => {
    const input = records(10);
    const all = input.map((r) => r.dynamodb.SequenceNumber);
    const { batches, seqOf } = recorder();
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      reportBatchItemFailures: true,
      handler: async (event): Promise<DynamoDBBatchResponse> => {
        batches.push(seqOf(event));
        calls++;
        // First call: 7 and 9 fail; Lambda checkpoints at the lowest (7).
        if (calls === 1)
          return {
            batchItemFailures: [{ itemIdentifier: all[8] as string }, { itemIdentifier: all[6] as string }],
          };
        return { batchItemFailures: [] };
      },
    });
    const result = await emulator.runRecords(input);
    expect(batches).toEqual([all, all.slice(6)]);
    expect(result.checkpoint).toBe(all[9]);
    const response = events(emulator.log, 'response')[0];
    expect(response).toMatchObject({ outcome: 'partial-failure', failedSequenceNumber: all[6] });
  });

  it('ReportBatchItemFailures checkpoints before the failed record at once: a stop during its retries redelivers 7–10 only', async () => {
    const input = records(10);
    const all = input.map((r) => r.dynamodb.SequenceNumber);
    const checkpoints: string[] = [];
    let atRetry: string[] | undefined;
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      reportBatchItemFailures: true,
      handler: async (): Promise<DynamoDBBatchResponse> => {
        calls++;
        if (calls === 1) return { batchItemFailures: [{ itemIdentifier: all[6] as string }] };
        atRetry = [...checkpoints];
        // Still failing: stopped meanwhile (Ctrl-C, the poller's signal), as a restart would be.
        emulator.stop();
        throw new Error('still down');
      },
    });
    await expect(
      emulator.runShard({
        shardId: 's',
        streamArn: input[0]?.eventSourceARN ?? '',
        pages: [input],
        onCheckpoint: (s) => {
          checkpoints.push(s);
        },
      }),
    ).rejects.toMatchObject({ name: 'EmulatorStoppedError', sequenceNumber: all[6] });
    expect(atRetry).toEqual([all[5]]);
    expect(checkpoints).toEqual([all[5]]);

    // The restart: everything after the checkpoint, and only that, is delivered again.
    const redelivered: string[] = [];
    const restarted = new EventSourceMappingEmulator({
      handler: async (event) => {
        redelivered.push(...event.Records.map((r) => r.dynamodb.SequenceNumber));
      },
    });
    const after = BigInt(checkpoints.at(-1) as string);
    await restarted.runRecords(input.filter((r) => BigInt(r.dynamodb.SequenceNumber) > after));
    expect(redelivered).toEqual(all.slice(6));
  });

  it('records discarded for their age are checkpointed before the rest of the batch is retried', async () => {
    const start = Date.UTC(2026, 0, 1, 1, 0, 0);
    const clock = new ManualClock(start);
    const builder = new StreamEventBuilder({ now: () => 0 });
    const old = [builder.insert({ pk: 'old-1' }), builder.insert({ pk: 'old-2' })];
    for (const r of old) r.dynamodb.ApproximateCreationDateTime = start / 1000 - 120;
    const fresh = builder.insert({ pk: 'new-1' });
    fresh.dynamodb.ApproximateCreationDateTime = start / 1000 - 5;
    const checkpoints: string[] = [];
    let atRetry: string[] | undefined;
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      maximumRecordAgeInSeconds: 60,
      maximumRetryAttempts: 1,
      clock,
      handler: async () => {
        if (++calls === 2) atRetry = [...checkpoints];
        throw new Error('down');
      },
    });
    await emulator.runShard({
      shardId: 's',
      streamArn: builder.streamArn,
      pages: [[...old, fresh]],
      onCheckpoint: (s) => {
        checkpoints.push(s);
      },
    });
    expect(atRetry).toEqual([old[1]?.dynamodb.SequenceNumber]);
    expect(checkpoints).toEqual([old[1]?.dynamodb.SequenceNumber, fresh.dynamodb.SequenceNumber]);
  });

  it.each([
    ['an empty itemIdentifier', { batchItemFailures: [{ itemIdentifier: '' }] }],
    ['a null itemIdentifier', { batchItemFailures: [{ itemIdentifier: null }] }],
    ['a bad key name', { batchItemFailures: [{ itemId: '000000000000000000001' }] }],
    ['an identifier not in the batch', { batchItemFailures: [{ itemIdentifier: '999999999999999999999' }] }],
  ])('ReportBatchItemFailures: %s fails the whole batch', async (_, response) => {
    const input = records(3);
    const all = input.map((r) => r.dynamodb.SequenceNumber);
    const { batches, seqOf } = recorder();
    const emulator = new EventSourceMappingEmulator({
      reportBatchItemFailures: true,
      handler: (async (event: LambdaStreamEvent) => {
        batches.push(seqOf(event));
        return batches.length === 1 ? response : undefined;
      }) as unknown as StreamHandler,
    });
    await emulator.runRecords(input);
    expect(batches).toEqual([all, all]);
    expect(events(emulator.log, 'response')[0]).toMatchObject({ outcome: 'invalid-response' });
  });

  it('without ReportBatchItemFailures a returned batchItemFailures is ignored (success)', async () => {
    const input = records(3);
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      handler: async () => {
        calls++;
        return { batchItemFailures: [{ itemIdentifier: input[0]?.dynamodb.SequenceNumber as string }] };
      },
    });
    await emulator.runRecords(input);
    expect(calls).toBe(1);
  });

  it('a thrown error retries the whole batch until it succeeds', async () => {
    const input = records(5);
    const all = input.map((r) => r.dynamodb.SequenceNumber);
    const { batches, seqOf } = recorder();
    const emulator = new EventSourceMappingEmulator({
      handler: async (event) => {
        batches.push(seqOf(event));
        if (batches.length < 3) throw new Error('downstream unavailable');
      },
    });
    const result = await emulator.runRecords(input);
    expect(batches).toEqual([all, all, all]);
    expect(events(emulator.log, 'retry')).toHaveLength(2);
    expect(result.checkpoint).toBe(all[4]);
  });

  it('endless retries of a handler that fails without I/O leave the event loop free, so stop() arrives', async () => {
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      // Lambda's defaults: retried until the record expires; a ManualClock never lets it expire.
      clock: new ManualClock(),
      // Endless as asked for: the stall check would otherwise end the run before the timer.
      stallAfterAttempts: Number.POSITIVE_INFINITY,
      keepLog: false,
      handler: () => {
        calls++;
        throw new Error('invalid input');
      },
    });
    // A timer: it only runs if the retry loop yields to the event loop.
    setTimeout(() => emulator.stop(), 0);
    await expect(emulator.runRecords(records(1))).rejects.toMatchObject({ name: 'EmulatorStoppedError' });
    expect(calls).toBeGreaterThan(0);
  });

  it('a timeout counts as a function error', async () => {
    const input = records(2);
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      timeoutSeconds: 0.05,
      maximumRetryAttempts: 0,
      timedOutSettleMs: 0,
      onFailure: new MemoryFailureDestination(),
      // Never settles: with a 1 s timer instead, an event loop stalled past that second (a loaded
      // machine) would let the call finish before the 0 ms settle cap and drop "still running".
      handler: () =>
        new Promise(() => {
          calls++;
        }),
    });
    await emulator.runRecords(input);
    expect(calls).toBe(1);
    expect(events(emulator.log, 'response')[0]).toMatchObject({ outcome: 'timeout' });
    expect((events(emulator.log, 'response')[0] as { error: string }).error).toMatch(
      /still running after 0 ms more, the retry overlaps it/,
    );
  });

  it('waits for a timed-out call to settle before the retry, as Lambda kills the timed-out runtime', async () => {
    const order: string[] = [];
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      timeoutSeconds: 0.02,
      maximumRetryAttempts: 1,
      handler: async () => {
        const call = ++calls;
        order.push(`start-${call}`);
        if (call === 1) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          order.push('end-1');
        }
      },
    });
    const result = await emulator.runRecords(records(1));
    expect(order).toEqual(['start-1', 'end-1', 'start-2']);
    const responses = events(emulator.log, 'response') as Array<{ outcome: string; error?: string }>;
    expect(responses.map((r) => r.outcome)).toEqual(['timeout', 'success']);
    expect(responses[0]?.error).not.toMatch(/still running/);
    expect(result.discarded).toBe(0);
  });

  it('gives the handler a Context counting down from the timeout', async () => {
    let remaining = -1;
    let name = '';
    const emulator = new EventSourceMappingEmulator({
      functionName: 'archiver',
      timeoutSeconds: 30,
      handler: async (_event, context) => {
        remaining = context.getRemainingTimeInMillis();
        name = `${context.functionName} ${context.invokedFunctionArn}`;
        expect(context.awsRequestId).toMatch(/^[0-9a-f-]{36}$/);
      },
    });
    await emulator.runRecords(records(1));
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThanOrEqual(30_000);
    expect(name).toBe('archiver arn:aws:lambda:us-east-1:000000000000:function:archiver');
  });

  it('BisectBatchOnFunctionError halves a failing batch until the poison record is alone', async () => {
    const input = records(8);
    const all = input.map((r) => r.dynamodb.SequenceNumber);
    const poison = all[5];
    const { batches, seqOf } = recorder();
    const destination = new MemoryFailureDestination();
    const emulator = new EventSourceMappingEmulator({
      bisectBatchOnFunctionError: true,
      maximumRetryAttempts: 1,
      onFailure: destination,
      handler: async (event) => {
        const seqs = seqOf(event);
        batches.push(seqs);
        if (seqs.includes(poison as string)) throw new Error('poison');
      },
    });
    const result = await emulator.runRecords(input);
    expect(batches).toEqual([
      all,
      all.slice(0, 4),
      all.slice(4),
      all.slice(4, 6),
      [all[4]],
      [all[5]],
      [all[5]],
      [all[6], all[7]],
    ]);
    expect(events(emulator.log, 'bisect').map((e) => (e as { sizes: number[] }).sizes)).toEqual([
      [4, 4],
      [2, 2],
      [1, 1],
    ]);
    expect(destination.records).toHaveLength(1);
    expect(destination.records[0]?.DDBStreamBatchInfo).toMatchObject({
      startSequenceNumber: poison,
      batchSize: 1,
    });
    expect(result.checkpoint).toBe(all[7]);
    expect(result.discarded).toBe(1);
  });

  it('retries exhausted: one on-failure invocation record with the batch info, then the shard moves on', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10));
    const builder = new StreamEventBuilder({ tableName: 'orders', now: 1_767_225_600 });
    const input = [builder.insert({ pk: 'a' }), builder.insert({ pk: 'b' }), builder.insert({ pk: 'c' })];
    const destination = new MemoryFailureDestination();
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      functionName: 'fn',
      region: 'eu-west-1',
      accountId: '111122223333',
      batchSize: 2,
      maximumRetryAttempts: 2,
      onFailure: destination,
      clock,
      handler: async (event) => {
        calls++;
        if (event.Records.some((r) => r.dynamodb.Keys.pk?.S === 'a')) throw new Error('boom');
      },
    });
    const result = await emulator.runShard({
      shardId: 'shardId-1',
      streamArn: builder.streamArn,
      pages: [input],
    });
    expect(calls).toBe(3 + 1);
    expect(destination.records).toEqual([
      {
        requestContext: {
          requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
          functionArn: 'arn:aws:lambda:eu-west-1:111122223333:function:fn',
          condition: 'RetryAttemptsExhausted',
          approximateInvokeCount: 3,
        },
        responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
        version: '1.0',
        timestamp: '2026-01-01T00:00:10.000Z',
        DDBStreamBatchInfo: {
          shardId: 'shardId-1',
          startSequenceNumber: input[0]?.dynamodb.SequenceNumber,
          endSequenceNumber: input[1]?.dynamodb.SequenceNumber,
          // Whole seconds, as in AWS's example invocation record.
          approximateArrivalOfFirstRecord: '2026-01-01T00:00:00Z',
          approximateArrivalOfLastRecord: '2026-01-01T00:00:00Z',
          batchSize: 2,
          streamArn: builder.streamArn,
        },
      },
    ]);
    expect(result.checkpoint).toBe(input[2]?.dynamodb.SequenceNumber);
  });

  it('partial failures count against MaximumRetryAttempts', async () => {
    const input = records(4);
    const all = input.map((r) => r.dynamodb.SequenceNumber);
    const destination = new MemoryFailureDestination();
    const { batches, seqOf } = recorder();
    const emulator = new EventSourceMappingEmulator({
      reportBatchItemFailures: true,
      maximumRetryAttempts: 1,
      onFailure: destination,
      handler: async (event) => {
        batches.push(seqOf(event));
        return { batchItemFailures: [{ itemIdentifier: all[2] as string }] };
      },
    });
    await emulator.runRecords(input);
    expect(batches).toEqual([all, all.slice(2)]);
    expect(destination.records[0]?.DDBStreamBatchInfo).toMatchObject({
      startSequenceNumber: all[2],
      endSequenceNumber: all[3],
      batchSize: 2,
    });
    expect(destination.records[0]?.responseContext?.functionError).toBeUndefined();
  });

  it('MaximumRecordAgeInSeconds: older records are skipped and sent to the destination', async () => {
    const start = Date.UTC(2026, 0, 1, 1, 0, 0);
    const clock = new ManualClock(start);
    const builder = new StreamEventBuilder({ now: () => 0 });
    const old = [builder.insert({ pk: 'old-1' }), builder.insert({ pk: 'old-2' })];
    for (const r of old) r.dynamodb.ApproximateCreationDateTime = start / 1000 - 120;
    const fresh = [builder.insert({ pk: 'new-1' })];
    for (const r of fresh) r.dynamodb.ApproximateCreationDateTime = start / 1000 - 5;
    const destination = new MemoryFailureDestination();
    const delivered: string[] = [];
    const emulator = new EventSourceMappingEmulator({
      maximumRecordAgeInSeconds: 60,
      onFailure: destination,
      clock,
      handler: async (event) => {
        delivered.push(...event.Records.map((r) => r.dynamodb.Keys.pk?.S as string));
      },
    });
    const result = await emulator.runRecords([...old, ...fresh]);
    expect(delivered).toEqual(['new-1']);
    expect(destination.records).toHaveLength(1);
    expect(destination.records[0]?.requestContext).toMatchObject({
      condition: 'RecordAgeExceeded',
      approximateInvokeCount: 0,
    });
    expect(destination.records[0]?.DDBStreamBatchInfo.batchSize).toBe(2);
    expect(result.checkpoint).toBe(fresh[0]?.dynamodb.SequenceNumber);
  });

  it('records that age out while a batch is retried are discarded at the next attempt', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const builder = new StreamEventBuilder({ now: Date.UTC(2026, 0, 1) / 1000 });
    const destination = new MemoryFailureDestination();
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      maximumRecordAgeInSeconds: 60,
      retryDelayMs: 25_000,
      onFailure: destination,
      clock,
      handler: async () => {
        calls++;
        throw new Error('down');
      },
    });
    await emulator.runRecords([builder.insert({ pk: 'x' })]);
    // Attempts at t=0, 25 s, 50 s; at 75 s the record is older than 60 s.
    expect(calls).toBe(3);
    expect(destination.records[0]?.requestContext).toMatchObject({
      condition: 'RecordAgeExceeded',
      approximateInvokeCount: 3,
    });
  });

  it('MaximumBatchingWindowInSeconds gathers records across pages until the window closes', async () => {
    const clock = new ManualClock();
    const builder = new StreamEventBuilder();
    const sizes: number[] = [];
    const emulator = new EventSourceMappingEmulator({
      maximumBatchingWindowInSeconds: 2,
      batchSize: 100,
      clock,
      handler: async (event) => {
        sizes.push(event.Records.length);
      },
    });
    async function* pages() {
      yield [builder.insert({ pk: 'a' })];
      clock.advance(1_000);
      yield [builder.insert({ pk: 'b' })];
      clock.advance(1_500);
      yield [];
      yield [builder.insert({ pk: 'c' })];
    }
    await emulator.runShard({ shardId: 's', streamArn: builder.streamArn, pages: pages() });
    expect(sizes).toEqual([2, 1]);
  });

  it('ParallelizationFactor keeps every item key in order while batches run concurrently', async () => {
    const builder = new StreamEventBuilder();
    const input: LambdaStreamRecord[] = [];
    for (let round = 0; round < 30; round++)
      for (let k = 0; k < 7; k++) input.push(builder.insert({ pk: `key-${k}`, round }));
    const seenPerKey = new Map<string, number[]>();
    const lanes = new Set<number>();
    let concurrent = 0;
    let maxConcurrent = 0;
    const emulator = new EventSourceMappingEmulator({
      parallelizationFactor: 4,
      batchSize: 5,
      handler: async (event) => {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        await new Promise((resolve) => setTimeout(resolve, 1));
        for (const r of event.Records) {
          const key = r.dynamodb.Keys.pk?.S as string;
          const rounds = seenPerKey.get(key) ?? [];
          rounds.push(Number(r.dynamodb.NewImage?.round?.N));
          seenPerKey.set(key, rounds);
        }
        concurrent--;
      },
    });
    const result = await emulator.runRecords(input);
    for (const e of events(emulator.log, 'invoke')) lanes.add((e as { lane: number }).lane);
    expect(seenPerKey.size).toBe(7);
    for (const rounds of seenPerKey.values()) expect(rounds).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(lanes.size).toBeGreaterThan(1);
    expect(maxConcurrent).toBeGreaterThan(1);
    expect(result.checkpoint).toBe(input.at(-1)?.dynamodb.SequenceNumber);
  });

  it('checkpoints only past records every lane has finished', async () => {
    const builder = new StreamEventBuilder();
    const input = [builder.insert({ pk: 'a' }), builder.insert({ pk: 'b' })];
    const [a, b] = input.map((r) => r.dynamodb.SequenceNumber) as [string, string];
    const checkpoints: string[] = [];
    let releaseA: () => void = () => undefined;
    const aHeld = new Promise<void>((resolve) => {
      releaseA = resolve;
    });
    let failA = true;
    const invokes = () =>
      events(emulator.log, 'invoke') as Array<{ requestId: string; lane: number; sequenceNumbers: string[] }>;
    const requestOf = (seq: string) => invokes().find((e) => e.sequenceNumbers[0] === seq)?.requestId;
    let bAnswered: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      bAnswered = resolve;
    });
    const emulator = new EventSourceMappingEmulator({
      parallelizationFactor: 10,
      batchSize: 1,
      onEvent: (e) => {
        if (e.type === 'response' && e.requestId === requestOf(b)) bAnswered();
      },
      handler: async (event) => {
        if (event.Records[0]?.dynamodb.Keys.pk?.S === 'a' && failA) {
          failA = false;
          await aHeld;
          throw new Error('once');
        }
      },
    });
    const run = emulator.runShard({
      shardId: 's',
      streamArn: builder.streamArn,
      pages: [input],
      onCheckpoint: (s) => {
        checkpoints.push(s);
      },
    });
    // b's batch answered (in its own lane) while a is still running in another: waited for by the
    // emulator's own response event, not by polling against a deadline.
    await answered;
    await new Promise((resolve) => setImmediate(resolve));
    expect(new Set(invokes().map((e) => e.lane)).size).toBe(2);
    expect(checkpoints).toEqual([]);
    expect(events(emulator.log, 'checkpoint')).toEqual([]);
    releaseA();
    await run;
    expect(checkpoints).toEqual([b]);
    expect(BigInt(b)).toBeGreaterThan(BigInt(a));
  });

  it('stops the lane after a batch that could not be settled: the next batch is never invoked', async () => {
    const builder = new StreamEventBuilder();
    const input = [builder.insert({ pk: 'a' }), builder.insert({ pk: 'b' }), builder.insert({ pk: 'c' })];
    const invoked: string[] = [];
    const checkpoints: string[] = [];
    const emulator = new EventSourceMappingEmulator({
      batchSize: 1,
      maximumRetryAttempts: 0,
      onFailure: {
        send: async () => {
          throw new Error('SQS down');
        },
      },
      handler: async (event) => {
        const key = event.Records[0]?.dynamodb.Keys.pk?.S as string;
        invoked.push(key);
        if (key === 'a') throw new Error('poison');
      },
    });
    await expect(
      emulator.runShard({
        shardId: 's',
        streamArn: builder.streamArn,
        pages: [input],
        onCheckpoint: (s) => {
          checkpoints.push(s);
        },
      }),
    ).rejects.toThrow('SQS down');
    expect(invoked).toEqual(['a']);
    expect(checkpoints).toEqual([]);
  });

  it('stops every lane once one lane could not settle a batch', async () => {
    const builder = new StreamEventBuilder();
    const input = records(40, { keys: (i) => `k${i % 8}` });
    let failed = false;
    let invokedAfterFailure = 0;
    const emulator = new EventSourceMappingEmulator({
      batchSize: 1,
      parallelizationFactor: 4,
      maximumRetryAttempts: 0,
      onFailure: {
        send: async () => {
          failed = true;
          throw new Error('SQS down');
        },
      },
      handler: async (event) => {
        if (failed) invokedAfterFailure++;
        if (event.Records[0]?.dynamodb.Keys.pk?.S === 'k0') throw new Error('poison');
      },
    });
    await expect(emulator.runRecords(input, 's', builder.streamArn)).rejects.toThrow('SQS down');
    expect(invokedAfterFailure).toBe(0);
    expect(emulator.log.filter((e) => e.type === 'invoke').length).toBeLessThan(input.length);
  });

  it('FilterCriteria drops non-matching records and still advances the checkpoint past them', async () => {
    const builder = new StreamEventBuilder();
    const input = [
      builder.insert({ pk: 'a', expiresAt: 1 }),
      builder.ttlDelete({ pk: 'a', expiresAt: 1 }),
      builder.userDelete({ pk: 'b' }),
      builder.ttlDelete({ pk: 'c', expiresAt: 2 }),
      builder.insert({ pk: 'd' }),
    ];
    const delivered: string[] = [];
    const checkpoints: string[] = [];
    const emulator = new EventSourceMappingEmulator({
      filterPatterns: [
        JSON.stringify({ userIdentity: { type: ['Service'], principalId: ['dynamodb.amazonaws.com'] } }),
      ],
      handler: async (event) => {
        delivered.push(...event.Records.map((r) => `${r.eventName}:${r.dynamodb.Keys.pk?.S}`));
      },
    });
    const result = await emulator.runShard({
      shardId: 's',
      streamArn: builder.streamArn,
      pages: [input],
      onCheckpoint: (s) => {
        checkpoints.push(s);
      },
    });
    expect(delivered).toEqual(['REMOVE:a', 'REMOVE:c']);
    expect(result.filtered).toBe(3);
    expect(events(emulator.log, 'filtered')).toHaveLength(3);
    expect(checkpoints.at(-1)).toBe(input[4]?.dynamodb.SequenceNumber);
  });

  it('a shard whose every record is filtered out still checkpoints without invoking', async () => {
    const builder = new StreamEventBuilder();
    const input = [builder.insert({ pk: 'a' }), builder.insert({ pk: 'b' })];
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      filterPatterns: [{ eventName: ['REMOVE'] }],
      handler: async () => {
        calls++;
      },
    });
    const result = await emulator.runRecords(input);
    expect(calls).toBe(0);
    expect(result.checkpoint).toBe(input[1]?.dynamodb.SequenceNumber);
  });

  it('rejects unknown and out-of-range options', () => {
    const handler = async () => undefined;
    expect(() => new EventSourceMappingEmulator({ handler, batchsize: 5 } as never)).toThrow(
      /unknown option 'batchsize'/,
    );
    expect(() => new EventSourceMappingEmulator({ handler, batchSize: 0 })).toThrow(/batchSize/);
    expect(() => new EventSourceMappingEmulator({ handler, maximumRecordAgeInSeconds: 10 })).toThrow(
      /maximumRecordAgeInSeconds/,
    );
    expect(() => new EventSourceMappingEmulator({ handler, parallelizationFactor: 11 })).toThrow(
      /parallelizationFactor/,
    );
    expect(() => new EventSourceMappingEmulator({ handler, timedOutSettleMs: -1 })).toThrow(
      /timedOutSettleMs/,
    );
    expect(() => new EventSourceMappingEmulator({ handler, maximumRetryAttempts: -1 })).not.toThrow();
  });
});
