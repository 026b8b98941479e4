import { describe, expect, it } from 'vitest';
import { TidewaterError } from '../../../../src/core/index.js';
import { ManualClock } from '../../../../src/local/emulator/clock.js';
import {
  EventSourceMappingEmulator,
  type EventSourceMappingOptions,
} from '../../../../src/local/emulator/emulator.js';
import { ReplayStalledError } from '../../../../src/local/emulator/errors.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import {
  DEFAULT_WAIT_BOUND_MS,
  EmulatorWaitTimeoutError,
} from '../../../../src/local/emulator/wait-bound.js';
import type { LambdaStreamRecord } from '../../../../src/records/types.js';

// Every wait of the event source mapping emulator ends: a handler that never settles, a handler
// that settled on a shard that failed, a source of pages or a callback that never answers. Each
// run is given a bound here; past it the test fails with what was still pending instead of hanging.

/** The test's own bound on a run: far above what the settings below need, far below vitest's. */
const TEST_BOUND_MS = 8_000;
const WAIT_BOUND_MS = 150;

const never = <T>() => new Promise<T>(() => undefined);

function records(...keys: string[]): LambdaStreamRecord[] {
  const builder = new StreamEventBuilder({ now: 1_767_225_600 });
  return keys.map((pk) => builder.insert({ pk }));
}

/** The run's rejection, or a failure naming the bound when it is still pending at it. */
async function rejectionWithin(run: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${TEST_BOUND_MS} ms`)), TEST_BOUND_MS);
  });
  try {
    return await Promise.race([
      run.then(
        () => new Error('the run ended without an error'),
        (error: unknown) => error,
      ),
      bound,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function emulator(
  handler: EventSourceMappingOptions['handler'],
  options: Partial<EventSourceMappingOptions> = {},
) {
  return new EventSourceMappingEmulator({
    clock: new ManualClock(),
    waitBoundMs: WAIT_BOUND_MS,
    keepLog: true,
    ...options,
    handler,
  });
}

describe('EventSourceMappingEmulator: no wait without an end', () => {
  it('a handler that never settles: timed out, retried, and the run ends with ReplayStalledError naming the batch', async () => {
    const input = records('hangs');
    let calls = 0;
    const error = await rejectionWithin(
      emulator(
        () => {
          calls++;
          return never();
        },
        { timeoutSeconds: 0.05, timedOutSettleMs: 10, stallAfterAttempts: 2 },
      ).runRecords(input, 'shardId-hang'),
    );
    expect(error).toBeInstanceOf(ReplayStalledError);
    expect(error).toBeInstanceOf(TidewaterError);
    const stalled = error as ReplayStalledError;
    expect(stalled.name).toBe('ReplayStalledError');
    expect(stalled.shardId).toBe('shardId-hang');
    expect(stalled.sequenceNumbers).toEqual([input[0]?.dynamodb.SequenceNumber]);
    expect(stalled.lastError).toMatch(/^Task timed out after 0\.05 seconds .*still running after 10 ms more/);
    expect(calls).toBe(2);
  });

  it('a handler that settled but whose checkpoint callback never answers: EmulatorWaitTimeoutError naming the callback and the record', async () => {
    const input = records('settles');
    const error = await rejectionWithin(
      emulator(async () => undefined).runShard({
        shardId: 'shardId-checkpoint',
        streamArn: input[0]?.eventSourceARN ?? '',
        pages: [input],
        onCheckpoint: () => never(),
      }),
    );
    expect(error).toBeInstanceOf(EmulatorWaitTimeoutError);
    expect(error).toBeInstanceOf(TidewaterError);
    expect(error).toMatchObject({
      name: 'EmulatorWaitTimeoutError',
      waitedFor: 'checkpoint callback',
      shardId: 'shardId-checkpoint',
      waitedMs: WAIT_BOUND_MS,
      sequenceNumber: input[0]?.dynamodb.SequenceNumber,
    });
    expect((error as Error).message).toContain(`waited ${WAIT_BOUND_MS} ms for the checkpoint callback`);
  });

  it('a shard that failed (retries exhausted) whose on-failure destination never answers: EmulatorWaitTimeoutError naming the send', async () => {
    const input = records('ok', 'fails');
    const error = await rejectionWithin(
      emulator(
        async (event) => {
          if (event.Records.some((r) => r.dynamodb.Keys.pk?.S === 'fails')) throw new Error('cannot archive');
        },
        { batchSize: 1, maximumRetryAttempts: 1, onFailure: { send: () => never() } },
      ).runRecords(input, 'shardId-destination'),
    );
    expect(error).toMatchObject({
      name: 'EmulatorWaitTimeoutError',
      waitedFor: 'on-failure destination send',
      shardId: 'shardId-destination',
      sequenceNumber: input[1]?.dynamodb.SequenceNumber,
      // The record before it was settled: a restart resumes after it.
      checkpoint: input[0]?.dynamodb.SequenceNumber,
    });
  });

  it('a lane whose handler settled after another lane stalled the shard, its checkpoint callback hanging: the run ends with the stall', async () => {
    // Which key runs on which lane: read from a first run's log, so lane 0 holds the stuck record.
    const candidates = records(...Array.from({ length: 8 }, (_, i) => `key-${i}`));
    const probe = emulator(async () => undefined, { parallelizationFactor: 2, batchSize: 1 });
    await probe.runRecords(candidates);
    const laneOf = new Map<string, number>();
    for (const event of probe.log)
      if (event.type === 'invoke') laneOf.set(event.sequenceNumbers[0] as string, event.lane);
    const stuck = candidates.find((r) => laneOf.get(r.dynamodb.SequenceNumber) === 0);
    const settles = candidates.find((r) => laneOf.get(r.dynamodb.SequenceNumber) === 1);
    expect(stuck && settles).toBeDefined();
    const input = [stuck, settles] as LambdaStreamRecord[];

    let stuckCalls = 0;
    let releaseSettled: () => void = () => undefined;
    const shardFailed = new Promise<void>((resolve) => {
      releaseSettled = resolve;
    });
    const error = await rejectionWithin(
      emulator(
        async (event) => {
          if (event.Records[0]?.eventID === stuck?.eventID) {
            // The second failure stalls the shard; the other lane's handler settles right after.
            if (++stuckCalls === 2) setImmediate(releaseSettled);
            throw new Error('stuck');
          }
          await shardFailed;
        },
        { parallelizationFactor: 2, batchSize: 1, stallAfterAttempts: 2 },
      ).runShard({
        shardId: 'shardId-lanes',
        streamArn: input[0]?.eventSourceARN ?? '',
        pages: [input],
        onCheckpoint: () => never(),
      }),
    );
    expect(error).toBeInstanceOf(ReplayStalledError);
    expect(error).toMatchObject({
      shardId: 'shardId-lanes',
      sequenceNumbers: [stuck?.dynamodb.SequenceNumber],
    });
  });

  it('a source of pages that never yields the next one: EmulatorWaitTimeoutError naming the pages and the checkpoint', async () => {
    const input = records('first');
    async function* pages(): AsyncGenerator<LambdaStreamRecord[]> {
      yield input;
      await never();
    }
    const handled: string[] = [];
    const error = await rejectionWithin(
      emulator(async (event) => {
        handled.push(...event.Records.map((r) => r.dynamodb.SequenceNumber));
      }).runShard({ shardId: 'shardId-pages', streamArn: input[0]?.eventSourceARN ?? '', pages: pages() }),
    );
    expect(error).toMatchObject({
      name: 'EmulatorWaitTimeoutError',
      waitedFor: 'next page of records',
      shardId: 'shardId-pages',
      checkpoint: input[0]?.dynamodb.SequenceNumber,
    });
    expect(handled).toEqual([input[0]?.dynamodb.SequenceNumber]);
  });

  it('waits without a bound only when told to, and bounds every wait by default', () => {
    expect(DEFAULT_WAIT_BOUND_MS).toBe(300_000);
    expect(() => emulator(async () => undefined, { waitBoundMs: 0 })).toThrow(/waitBoundMs/);
    expect(() => emulator(async () => undefined, { waitBoundMs: Number.POSITIVE_INFINITY })).not.toThrow();
  });
});
