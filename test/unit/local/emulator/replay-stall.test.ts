import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorEvent } from '../../../../src/local/emulator/emulator.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import { replayKinesis } from '../../../../src/local/emulator/kinesis-replay.js';
import { failureLine, RepeatedLineWriter, replay } from '../../../../src/local/emulator/replay.js';
import { toKinesisRecord } from '../../../../src/records/index.js';

/**
 * Calls after which a failing handler starts succeeding. Without the stall check a replay of an
 * always-failing record never ends; the guard lets it end, so a regression fails instead of hanging.
 */
const GUARD = 50;
const SHARD = 'shardId-replay-00000000';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidewater-replay-stall-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function eventFile(name: string, count: number) {
  const builder = new StreamEventBuilder();
  const records = Array.from({ length: count }, (_, i) => builder.insert({ pk: `p-${i + 1}` }));
  const file = join(dir, name);
  await writeFile(file, `${JSON.stringify(builder.event(...records))}\n`);
  return { file, records };
}

describe('replay of records that keep failing', () => {
  it("ends with ReplayStalledError under Lambda's default retries, and logs the repeated error once with a count", async () => {
    const { file, records } = await eventFile('poison.jsonl', 2);
    const lines: string[] = [];
    const responses: EmulatorEvent[] = [];
    let calls = 0;
    const run = replay({
      files: file,
      mapping: {
        handler: async () => {
          if (++calls <= GUARD) throw new Error('sink down');
        },
        onEvent: (event) => {
          if (event.type === 'response') responses.push(event);
        },
      },
      log: (line) => lines.push(line),
    });
    await expect(run).rejects.toMatchObject({
      name: 'ReplayStalledError',
      attempts: 10,
      sequenceNumbers: records.map((r) => r.dynamodb.SequenceNumber),
      eventIds: records.map((r) => r.eventID),
      lastError: 'Error: sink down',
    });
    await expect(run).rejects.toThrow(
      new RegExp(`${records[0]?.dynamodb.SequenceNumber} \\(eventID ${records[0]?.eventID}\\)`),
    );
    await expect(run).rejects.toThrow(
      /Bound it with maximumRetryAttempts or maximumRecordAgeInSeconds \(serverless\.yml: .*\), or raise the emulator's stallAfterAttempts/,
    );
    expect(calls).toBe(10);
    // The mapping's own onEvent still sees every response; the log collapses them.
    expect(responses).toHaveLength(10);
    expect(lines).toEqual([
      `${SHARD}: function-error: Error: sink down`,
      `${SHARD}: function-error: Error: sink down (repeated 10 times)`,
    ]);
  });

  it("stops even with maximumRecordAgeInSeconds: the replay's clock is the data's and never moves", async () => {
    const { file } = await eventFile('aged.jsonl', 1);
    let calls = 0;
    await expect(
      replay({
        files: file,
        mapping: {
          maximumRecordAgeInSeconds: 3600,
          handler: async () => {
            if (++calls <= GUARD) throw new Error('sink down');
          },
        },
      }),
    ).rejects.toThrow(/maximumRecordAgeInSeconds \(3600\) never discarded them.*retryDelayMs moves it/);
    expect(calls).toBe(10);
  });

  it('collapses only consecutive identical errors, and a run of one is written once', async () => {
    const { file } = await eventFile('flaky.jsonl', 1);
    const errors = ['A', 'A', 'A', 'B', 'A'];
    let calls = 0;
    const lines: string[] = [];
    const result = await replay({
      files: file,
      mapping: {
        handler: async () => {
          const error = errors[calls++];
          if (error) throw new Error(error);
        },
      },
      log: (line) => lines.push(line),
    });
    expect(result.shards[0]?.invocations).toBe(6);
    expect(lines).toEqual([
      `${SHARD}: function-error: Error: A`,
      `${SHARD}: function-error: Error: A (repeated 3 times)`,
      `${SHARD}: function-error: Error: B`,
      `${SHARD}: function-error: Error: A`,
    ]);
  });
});

describe('replay of Kinesis records that fail', () => {
  it("logs each failure once per run of repeats, and the mapping's own onEvent still sees every response", async () => {
    const builder = new StreamEventBuilder({ now: 1_767_225_600 });
    const record = toKinesisRecord(builder.insert({ pk: 'p-1' }), {
      sequenceNumber: '49000000000000000000000000000000000000000000000000000001',
      tableName: 'orders',
      streamArn: 'arn:aws:kinesis:us-east-1:000000000000:stream/orders-changes',
      creationTime: 1_767_225_600_000,
    });
    const shard = record.eventID.slice(0, record.eventID.lastIndexOf(':'));
    const file = join(dir, 'kinesis-flaky.jsonl');
    await writeFile(file, `${JSON.stringify(record)}\n`);
    const errors = ['A', 'A', 'B'];
    let calls = 0;
    const lines: string[] = [];
    const responses: EmulatorEvent[] = [];
    const result = await replayKinesis({
      files: file,
      mapping: {
        handler: async () => {
          const error = errors[calls++];
          if (error) throw new Error(error);
        },
        onEvent: (event) => {
          if (event.type === 'response') responses.push(event);
        },
      },
      log: (line) => lines.push(line),
    });
    expect(result.shards[0]?.invocations).toBe(4);
    expect(responses).toHaveLength(4);
    expect(lines).toEqual([
      `${shard}: function-error: Error: A`,
      `${shard}: function-error: Error: A (repeated 2 times)`,
      `${shard}: function-error: Error: B`,
    ]);
  });
});

describe('failureLine and RepeatedLineWriter', () => {
  it('describes failed responses only; a partial batch response names its record', () => {
    const base = { shardId: 's', lane: 0, requestId: 'r' } as const;
    expect(failureLine({ type: 'response', ...base, outcome: 'success' })).toBeUndefined();
    expect(failureLine({ type: 'checkpoint', shardId: 's', sequenceNumber: '1' })).toBeUndefined();
    expect(failureLine({ type: 'response', ...base, outcome: 'timeout', error: 'Task timed out' })).toBe(
      's: timeout: Task timed out',
    );
    expect(
      failureLine({ type: 'response', ...base, outcome: 'partial-failure', failedSequenceNumber: '42' }),
    ).toBe('s: partial-failure from 42');
  });

  it('writes the first line of a run at once and its count when the run ends', () => {
    const out: string[] = [];
    const writer = new RepeatedLineWriter((line) => out.push(line));
    writer.line('x');
    writer.line('x');
    expect(out).toEqual(['x']);
    writer.line('y');
    expect(out).toEqual(['x', 'x (repeated 2 times)', 'y']);
    writer.flush();
    writer.flush();
    writer.line('y');
    writer.line('y');
    writer.line('y');
    writer.flush();
    expect(out).toEqual(['x', 'x (repeated 2 times)', 'y', 'y', 'y (repeated 3 times)']);
  });
});
