import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../src/local/emulator/clock.js';
import { MemoryFailureDestination } from '../../../../src/local/emulator/destinations.js';
import {
  type EmulatorEvent,
  EventSourceMappingEmulator,
  type EventSourceMappingOptions,
  type StreamHandlerEvent,
} from '../../../../src/local/emulator/emulator.js';
import { ReplayStalledError } from '../../../../src/local/emulator/errors.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import { WINDOW_STATE_LIMIT_BYTES } from '../../../../src/pipeline/window-event.js';
import type { LambdaStreamRecord } from '../../../../src/records/types.js';

// Every scenario here follows the Lambda developer guide, "Using tumbling windows with DynamoDB"
// (services-ddb-windows); a rule the guide leaves open is named as the emulator's choice, with the
// reason, in docs/local.md's rule table.

const T0 = Date.UTC(2026, 0, 1); // a window boundary for any width that divides a day
const seconds = (s: number) => T0 / 1000 + s;

/** Records created at the given offsets (seconds after T0), in shard order. */
function recordsAt(...offsets: number[]): LambdaStreamRecord[] {
  let i = 0;
  const builder = new StreamEventBuilder({ now: () => seconds(offsets[i++] as number) });
  return offsets.map((_, n) => builder.insert({ pk: `item-${n + 1}` }));
}

interface Call {
  records: string[];
  window: { start: string; end: string } | undefined;
  state: unknown;
  shardId: string | undefined;
  eventSourceARN: string | undefined;
  final: boolean | undefined;
  early: boolean | undefined;
}

function callOf(event: StreamHandlerEvent): Call {
  return {
    records: event.Records.map((r) => r.dynamodb.Keys.pk?.S as string),
    window: event.window,
    state: structuredClone(event.state),
    shardId: event.shardId,
    eventSourceARN: event.eventSourceARN,
    final: event.isFinalInvokeForWindow,
    early: event.isWindowTerminatedEarly,
  };
}

/** A handler that counts records into `state.n` and returns it, as the guide's example does. */
function counting(calls: Call[], fail?: (call: Call) => boolean) {
  return async (event: StreamHandlerEvent) => {
    const call = callOf(event);
    calls.push(call);
    if (fail?.(call)) throw new Error(`failing ${call.final ? 'final' : call.records.join(',')}`);
    const n = ((event.state?.n as number | undefined) ?? 0) + event.Records.length;
    return { state: { n } };
  };
}

function emulator(
  options: Omit<EventSourceMappingOptions, 'handler'>,
  handler: EventSourceMappingOptions['handler'],
) {
  return new EventSourceMappingEmulator({
    tumblingWindowInSeconds: 60,
    clock: new ManualClock(T0),
    ...options,
    handler,
  });
}

const minute = (m: number) => ({
  start: new Date(T0 + m * 60_000).toISOString().replace('.000', ''),
  end: new Date(T0 + (m + 1) * 60_000).toISOString().replace('.000', ''),
});

describe('tumbling windows (Lambda developer guide: Using tumbling windows with DynamoDB)', () => {
  it('carries the state between the invocations of a window, ends it with a final invocation holding the state and no records, and starts the next window from {}', async () => {
    const input = recordsAt(0, 10, 70);
    const calls: Call[] = [];
    const checkpoints: string[] = [];
    const mapping = emulator({ batchSize: 1 }, counting(calls));
    const arn = input[0]?.eventSourceARN as string;
    await mapping.runShard({
      shardId: 'shardId-1',
      streamArn: arn,
      pages: [input],
      onCheckpoint: (s) => {
        checkpoints.push(s);
      },
    });
    const common = { shardId: 'shardId-1', eventSourceARN: arn, early: false };
    expect(calls).toEqual([
      { ...common, records: ['item-1'], window: minute(0), state: {}, final: false },
      { ...common, records: ['item-2'], window: minute(0), state: { n: 1 }, final: false },
      { ...common, records: [], window: minute(0), state: { n: 2 }, final: true },
      { ...common, records: ['item-3'], window: minute(1), state: {}, final: false },
      { ...common, records: [], window: minute(1), state: { n: 1 }, final: true },
    ]);
    // "After successful invocation, your function checkpoints the sequence number": a window's
    // records are checkpointed when its final invocation succeeds, not before.
    expect(checkpoints).toEqual([input[1]?.dynamodb.SequenceNumber, input[2]?.dynamodb.SequenceNumber]);
  });

  it('never puts records of two windows in one batch, and aligns windows to the epoch', async () => {
    // 120-second windows: 00:00–02:00 and 02:00–04:00, whatever time the first record has.
    const input = recordsAt(37, 119, 120, 200);
    const calls: Call[] = [];
    await emulator({ tumblingWindowInSeconds: 120, batchSize: 100 }, counting(calls)).runRecords(input);
    expect(calls.filter((c) => !c.final).map((c) => [c.window?.start, c.records])).toEqual([
      ['2026-01-01T00:00:00Z', ['item-1', 'item-2']],
      ['2026-01-01T00:02:00Z', ['item-3', 'item-4']],
    ]);
  });

  it('closes a window when the clock passes its end, on a page with no records', async () => {
    const clock = new ManualClock(T0 + 5_000);
    const [first] = recordsAt(1);
    const calls: Call[] = [];
    const mapping = emulator({ clock }, counting(calls));
    async function* pages() {
      yield [first as LambdaStreamRecord];
      clock.set(T0 + 59_999);
      yield [];
      expect(calls.filter((c) => c.final)).toEqual([]);
      clock.set(T0 + 60_000);
      yield [];
    }
    const result = await mapping.runShard({
      shardId: 's',
      streamArn: first?.eventSourceARN as string,
      pages: pages(),
      shardEnded: () => false,
    });
    expect(calls.map((c) => c.final)).toEqual([false, true]);
    expect(result.checkpoint).toBe(first?.dynamodb.SequenceNumber);
  });

  it('leaves the window open when the reader stops before the shard ends: no final invocation, nothing checkpointed', async () => {
    const input = recordsAt(1, 2);
    const calls: Call[] = [];
    const result = await emulator({}, counting(calls)).runShard({
      shardId: 's',
      streamArn: input[0]?.eventSourceARN as string,
      pages: [input],
      shardEnded: () => false,
    });
    expect(calls.map((c) => c.final)).toEqual([false]);
    expect(result.checkpoint).toBeUndefined();
  });

  it('a response without a state property is a failed invocation, retried under the retry policy', async () => {
    const input = recordsAt(1);
    const outcomes: EmulatorEvent[] = [];
    let calls = 0;
    await emulator(
      { maximumRetryAttempts: 5, onEvent: (e) => e.type === 'response' && outcomes.push(e) },
      async (event) => {
        calls++;
        if (event.isFinalInvokeForWindow) return { state: {} };
        return calls < 3 ? { batchItemFailures: [] } : { state: { n: 1 } };
      },
    ).runRecords(input);
    expect(outcomes.map((e) => (e as { outcome: string }).outcome)).toEqual([
      'invalid-response',
      'invalid-response',
      'success',
      'success',
    ]);
    expect((outcomes[0] as { error: string }).error).toBe(
      'the response has no state property (tumbling window)',
    );
  });

  it('retries a failed final invocation until it succeeds, whatever maximumRetryAttempts says ("suspends further processing until a successful invocation")', async () => {
    const input = recordsAt(1, 61);
    const calls: Call[] = [];
    let finals = 0;
    const destination = new MemoryFailureDestination();
    await emulator(
      { maximumRetryAttempts: 0, onFailure: destination },
      counting(calls, (call) => call.final === true && ++finals <= 3),
    ).runRecords(input);
    expect(calls.map((c) => (c.final ? `final ${c.window?.start}` : c.records.join()))).toEqual([
      'item-1',
      'final 2026-01-01T00:00:00Z',
      'final 2026-01-01T00:00:00Z',
      'final 2026-01-01T00:00:00Z',
      'final 2026-01-01T00:00:00Z',
      'item-2',
      'final 2026-01-01T00:01:00Z',
    ]);
    expect(destination.records).toEqual([]);
  });

  it('ends the run with ReplayStalledError naming the window when its final invocation never succeeds', async () => {
    const input = recordsAt(1);
    const calls: Call[] = [];
    const run = emulator(
      { maximumRetryAttempts: 0, stallAfterAttempts: 3 },
      counting(calls, (call) => call.final === true),
    ).runRecords(input);
    await expect(run).rejects.toBeInstanceOf(ReplayStalledError);
    await expect(run).rejects.toThrow(
      /final invocation of the tumbling window from 2026-01-01T00:00:00Z failed 3 times/,
    );
    expect(calls.filter((c) => c.final)).toHaveLength(3);
  });

  it('terminates the window early when the state passes 1 MB; the rest of the window starts from {}', async () => {
    const input = recordsAt(1, 2, 3);
    const calls: Call[] = [];
    const big = 'x'.repeat(WINDOW_STATE_LIMIT_BYTES);
    const checkpoints: string[] = [];
    await emulator({ batchSize: 1 }, async (event) => {
      calls.push(callOf(event));
      if (event.isFinalInvokeForWindow) return { state: {} };
      return { state: event.Records[0]?.dynamodb.Keys.pk?.S === 'item-2' ? { big } : { n: 1 } };
    }).runShard({
      shardId: 's',
      streamArn: input[0]?.eventSourceARN as string,
      pages: [input],
      onCheckpoint: (s) => {
        checkpoints.push(s);
      },
    });
    expect(calls.map((c) => [c.records.join() || (c.early ? 'final, early' : 'final'), c.state])).toEqual([
      ['item-1', {}],
      ['item-2', { n: 1 }],
      ['final, early', { big }],
      ['item-3', {}],
      ['final', { n: 1 }],
    ]);
    expect(checkpoints).toEqual([input[1]?.dynamodb.SequenceNumber, input[2]?.dynamodb.SequenceNumber]);
  });

  it('ends the window early when its records are given up (retries exhausted): the state no longer covers them', async () => {
    const input = recordsAt(1, 2, 3);
    const calls: Call[] = [];
    const destination = new MemoryFailureDestination();
    const result = await emulator(
      { batchSize: 1, maximumRetryAttempts: 0, onFailure: destination },
      counting(calls, (call) => call.records.includes('item-2')),
    ).runRecords(input);
    expect(calls.map((c) => [c.records.join() || (c.early ? 'final, early' : 'final'), c.state])).toEqual([
      ['item-1', {}],
      ['item-2', { n: 1 }],
      ['final, early', { n: 1 }],
      ['item-3', {}],
      ['final', { n: 1 }],
    ]);
    expect(destination.records.map((r) => r.DDBStreamBatchInfo.startSequenceNumber)).toEqual([
      input[1]?.dynamodb.SequenceNumber,
    ]);
    expect(result).toMatchObject({ discarded: 1, checkpoint: input[2]?.dynamodb.SequenceNumber });
  });

  it('takes the state of a partial batch response and retries from the reported record with it', async () => {
    const input = recordsAt(1, 2, 3);
    const calls: Call[] = [];
    await emulator({ reportBatchItemFailures: true }, async (event) => {
      calls.push(callOf(event));
      if (calls.length === 1)
        return {
          state: { n: 1 },
          batchItemFailures: [{ itemIdentifier: input[1]?.dynamodb.SequenceNumber as string }],
        };
      return { state: { n: ((event.state?.n as number) ?? 0) + event.Records.length } };
    }).runRecords(input);
    expect(calls.map((c) => [c.records, c.state])).toEqual([
      [['item-1', 'item-2', 'item-3'], {}],
      [['item-2', 'item-3'], { n: 1 }],
      [[], { n: 3 }],
    ]);
  });

  it('runs a windowed shard one batch at a time whatever ParallelizationFactor says: the state is per shard', async () => {
    const input = recordsAt(...Array.from({ length: 20 }, (_, i) => i));
    const calls: Call[] = [];
    const mapping = emulator({ parallelizationFactor: 4, batchSize: 5 }, counting(calls));
    await mapping.runRecords(input);
    const lanes = new Set(
      mapping.log.filter((e) => e.type === 'invoke').map((e) => (e as { lane: number }).lane),
    );
    expect(lanes).toEqual(new Set([0]));
    expect(calls.at(-1)).toMatchObject({ final: true, state: { n: 20 } });
  });

  it('joins a record stamped before the open window (creation times are approximate) to that window', async () => {
    const input = recordsAt(65, 59);
    const calls: Call[] = [];
    await emulator({ batchSize: 1 }, counting(calls)).runRecords(input);
    expect(calls.map((c) => [c.window?.start, c.records.join() || 'final'])).toEqual([
      ['2026-01-01T00:01:00Z', 'item-1'],
      ['2026-01-01T00:01:00Z', 'item-2'],
      ['2026-01-01T00:01:00Z', 'final'],
    ]);
  });

  it('refuses a window over 900 seconds (TumblingWindowInSeconds: 0 to 900)', () => {
    expect(() => emulator({ tumblingWindowInSeconds: 901 }, async () => ({ state: {} }))).toThrow(
      /tumblingWindowInSeconds/,
    );
  });
});
