import { describe, expect, it } from 'vitest';
import { TidewaterError } from '../../../../src/core/index.js';
import { ManualClock } from '../../../../src/local/emulator/clock.js';
import { MemoryFailureDestination } from '../../../../src/local/emulator/destinations.js';
import {
  DEFAULT_STALL_AFTER_ATTEMPTS,
  type EmulatorEvent,
  EventSourceMappingEmulator,
  type EventSourceMappingOptions,
} from '../../../../src/local/emulator/emulator.js';
import { ReplayStalledError } from '../../../../src/local/emulator/errors.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import type { LambdaStreamRecord } from '../../../../src/records/types.js';

/**
 * Calls after which a failing handler starts succeeding. Without the stall check these runs would
 * retry forever; the guard lets them end, so a regression fails the assertions instead of hanging.
 */
const GUARD = 50;

function records(count: number, now = 1_767_225_600): LambdaStreamRecord[] {
  const builder = new StreamEventBuilder({ now });
  return Array.from({ length: count }, (_, i) => builder.insert({ pk: `item-${i + 1}` }));
}

const seqs = (input: LambdaStreamRecord[]) => input.map((r) => r.dynamodb.SequenceNumber);

function emulatorFailing(
  fails: (sequenceNumbers: string[], call: number) => boolean,
  options: Omit<EventSourceMappingOptions, 'handler'> = {},
) {
  const batches: string[][] = [];
  const emulator = new EventSourceMappingEmulator({
    clock: new ManualClock(),
    ...options,
    handler: async (event) => {
      const batch = event.Records.map((r) => r.dynamodb.SequenceNumber);
      batches.push(batch);
      if (batches.length <= GUARD && fails(batch, batches.length))
        throw new TypeError(`invalid input in ${event.Records[0]?.eventID}`);
    },
  });
  return { emulator, batches };
}

async function stalled(run: Promise<unknown>): Promise<ReplayStalledError> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ReplayStalledError);
  return error as ReplayStalledError;
}

describe('EventSourceMappingEmulator: a batch that keeps failing without progress', () => {
  it('ends with ReplayStalledError naming the records, the last error, the attempts and the settings', async () => {
    const input = records(9);
    const all = seqs(input);
    const stuck = all.slice(2);
    const { emulator, batches } = emulatorFailing((batch) => batch.includes(all[2] as string), {
      batchSize: 7,
    });
    const checkpoints: string[] = [];
    const error = await stalled(
      emulator.runShard({
        shardId: 'shardId-stall',
        streamArn: input[0]?.eventSourceARN ?? '',
        // Two pages: the first batch (records 1–2) succeeds, the second (3–9) never does.
        pages: [input.slice(0, 2), input.slice(2)],
        onCheckpoint: (s) => {
          checkpoints.push(s);
        },
      }),
    );
    expect(DEFAULT_STALL_AFTER_ATTEMPTS).toBe(10);
    expect(batches).toEqual([all.slice(0, 2), ...Array.from({ length: 10 }, () => stuck)]);
    expect(error).toBeInstanceOf(TidewaterError);
    expect(error).toMatchObject({
      name: 'ReplayStalledError',
      shardId: 'shardId-stall',
      sequenceNumber: all[2],
      sequenceNumbers: stuck,
      eventIds: input.slice(2).map((r) => r.eventID),
      attempts: 10,
      lastError: `TypeError: invalid input in ${input[2]?.eventID}`,
      checkpoint: all[1],
    });
    // Records settled before the stuck batch stay checkpointed; nothing after it is.
    expect(checkpoints).toEqual([all[1]]);
    const message = error.message;
    expect(message).toContain('shardId-stall: 10 invocations in a row failed');
    expect(message).toContain(`checkpoint ${all[1]}`);
    expect(message).toContain('Stuck batch of 7 records');
    for (const record of input.slice(2, 7))
      expect(message).toContain(`${record.dynamodb.SequenceNumber} (eventID ${record.eventID})`);
    // A bounded list: five records, then how many more and the last.
    expect(message).not.toContain(all[7] as string);
    expect(message).toContain(`… 2 more up to ${all[8]}`);
    expect(message).toContain(`Last error: TypeError: invalid input in ${input[2]?.eventID}.`);
    expect(message).toMatch(/maximumRetryAttempts is unbounded/);
    expect(message).toMatch(/serverless\.yml: maximumRetryAttempts/);
    expect(message).toMatch(/stallAfterAttempts \(Infinity retries without end\)/);
    expect(events(emulator.log, 'retry')).toHaveLength(9);
  });

  it('a partial batch response failing at its first record is no progress either', async () => {
    const input = records(3);
    const all = seqs(input);
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      clock: new ManualClock(),
      reportBatchItemFailures: true,
      stallAfterAttempts: 4,
      handler: async () =>
        ++calls <= GUARD ? { batchItemFailures: [{ itemIdentifier: all[0] as string }] } : undefined,
    });
    const error = await stalled(emulator.runRecords(input));
    expect(calls).toBe(4);
    expect(error).toMatchObject({
      attempts: 4,
      sequenceNumbers: all,
      lastError: `batchItemFailures reported ${all[0]} as failed`,
    });
  });

  /** Eight records through a bisecting emulator whose handler fails every batch holding record `at`. */
  async function bisectingOnto(at: number) {
    const input = records(8);
    const all = seqs(input);
    const poison = all[at] as string;
    const { emulator, batches } = emulatorFailing((batch) => batch.includes(poison), {
      bisectBatchOnFunctionError: true,
    });
    const error = await stalled(emulator.runRecords(input));
    return { all, poison, batches, error };
  }

  it('bisected halves are progress only when they settle records: the poison record alone is named', async () => {
    const { all, poison, batches, error } = await bisectingOnto(5);
    expect(batches).toEqual([
      all,
      all.slice(0, 4),
      all.slice(4),
      all.slice(4, 6),
      [all[4]],
      ...Array.from({ length: 10 }, () => [poison]),
    ]);
    expect(error).toMatchObject({ sequenceNumbers: [poison], attempts: 10, checkpoint: all[4] });
  });

  it('bisecting down to a poison first record counts every failed half: no progress was made', async () => {
    const { all, poison, batches, error } = await bisectingOnto(0);
    // 8, 4, 2 and 1 records failed, then the single record six times more: ten in a row.
    expect(batches).toEqual([
      all,
      all.slice(0, 4),
      all.slice(0, 2),
      ...Array.from({ length: 7 }, () => [poison]),
    ]);
    expect(error).toMatchObject({ sequenceNumbers: [poison], attempts: 10, checkpoint: undefined });
  });

  it('stallAfterAttempts sets the count; Infinity retries without end until stop()', async () => {
    const three = emulatorFailing(() => true, { stallAfterAttempts: 3 });
    expect(await stalled(three.emulator.runRecords(records(1)))).toMatchObject({ attempts: 3 });
    expect(three.batches).toHaveLength(3);

    let calls = 0;
    const endless = new EventSourceMappingEmulator({
      clock: new ManualClock(),
      stallAfterAttempts: Number.POSITIVE_INFINITY,
      handler: async () => {
        if (++calls === 25) endless.stop();
        throw new Error('down');
      },
    });
    await expect(endless.runRecords(records(1))).rejects.toMatchObject({ name: 'EmulatorStoppedError' });
    expect(calls).toBe(25);
  });

  it('rejects a stallAfterAttempts that is not a positive integer or Infinity', () => {
    const handler = async () => undefined;
    for (const bad of [0, -1, 1.5, Number.NaN, '10']) {
      expect(() => new EventSourceMappingEmulator({ handler, stallAfterAttempts: bad as number })).toThrow(
        /option 'stallAfterAttempts' must be a positive integer, or Infinity/,
      );
    }
    for (const good of [1, 10_000, Number.POSITIVE_INFINITY])
      expect(() => new EventSourceMappingEmulator({ handler, stallAfterAttempts: good })).not.toThrow();
  });
});

describe('EventSourceMappingEmulator: runs the stall check leaves alone', () => {
  it.each([
    ['maximumRetryAttempts 30', {}],
    [
      'maximumRetryAttempts 30 with stallAfterAttempts 2 (ignored: the bound ends the retries)',
      { stallAfterAttempts: 2 },
    ],
  ])('%s: every retry is made, then the batch goes to the destination as before', async (_, extra) => {
    const destination = new MemoryFailureDestination();
    const input = records(2);
    const { emulator, batches } = emulatorFailing(() => true, {
      maximumRetryAttempts: 30,
      onFailure: destination,
      ...extra,
    });
    const result = await emulator.runRecords(input);
    expect(batches).toHaveLength(31);
    expect(destination.records).toHaveLength(1);
    expect(destination.records[0]?.requestContext).toMatchObject({
      condition: 'RetryAttemptsExhausted',
      approximateInvokeCount: 31,
    });
    expect(result).toMatchObject({ discarded: 2, checkpoint: input[1]?.dynamodb.SequenceNumber });
  });

  it('a batch that succeeds on its last attempt before the threshold is not cut', async () => {
    const input = records(3);
    const { emulator, batches } = emulatorFailing((_, call) => call < DEFAULT_STALL_AFTER_ATTEMPTS);
    const result = await emulator.runRecords(input);
    expect(batches).toHaveLength(10);
    expect(result).toMatchObject({ checkpoint: input[2]?.dynamodb.SequenceNumber, discarded: 0 });
  });

  it('records settled between failures restart the count: a slow batch is not stuck', async () => {
    const input = records(5);
    const all = seqs(input);
    const failures = new Map<string, number>();
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      clock: new ManualClock(),
      reportBatchItemFailures: true,
      handler: async (event) => {
        calls++;
        const batch = event.Records.map((r) => r.dynamodb.SequenceNumber);
        const head = batch[0] as string;
        const failed = failures.get(head) ?? 0;
        // Each record fails four times before it passes, and the batch moves one record forward.
        if (failed < 4) {
          failures.set(head, failed + 1);
          return { batchItemFailures: [{ itemIdentifier: head }] };
        }
        return batch[1] ? { batchItemFailures: [{ itemIdentifier: batch[1] }] } : undefined;
      },
    });
    const result = await emulator.runRecords(input);
    // 20 failed invocations without progress in all, never more than 4 in a row.
    expect(calls).toBe(25);
    expect(result.checkpoint).toBe(all[4]);
  });

  it.each([
    ['the retry delay moves the clock', (_clock: ManualClock) => undefined, { retryDelayMs: 5_000 }],
    ['the clock moves on its own', (clock: ManualClock) => clock.advance(5_000), {}],
  ])('with maximumRecordAgeInSeconds, when %s the records age out as in Lambda', async (_, tick, extra) => {
    const start = Date.UTC(2026, 0, 1);
    const clock = new ManualClock(start);
    const destination = new MemoryFailureDestination();
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      clock,
      maximumRecordAgeInSeconds: 60,
      onFailure: destination,
      ...extra,
      handler: async () => {
        calls++;
        tick(clock);
        throw new Error('down');
      },
    });
    const result = await emulator.runRecords(records(1, start / 1000));
    // Attempts at 0, 5, … 60 s: thirteen, more than the stall threshold; at 65 s the record is too old.
    expect(calls).toBe(13);
    expect(destination.records[0]?.requestContext).toMatchObject({
      condition: 'RecordAgeExceeded',
      approximateInvokeCount: 13,
    });
    expect(result.discarded).toBe(1);
  });

  it('with maximumRecordAgeInSeconds on a clock that never moves, the run still stops', async () => {
    const { emulator, batches } = emulatorFailing(() => true, { maximumRecordAgeInSeconds: 3600 });
    const error = await stalled(emulator.runRecords(records(1, Date.UTC(2026, 0, 1) / 1000)));
    expect(batches).toHaveLength(10);
    expect(error.message).toMatch(
      /maximumRecordAgeInSeconds \(3600\) never discarded them: the emulator's clock did not move .*retryDelayMs moves it/,
    );
  });
});

const events = (log: EmulatorEvent[], type: EmulatorEvent['type']) => log.filter((e) => e.type === type);
