import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { createWindowHandler, type WindowInfo } from '../../../src/pipeline/index.js';
import { NotAWindowEventError, WindowStateTooLargeError } from '../../../src/pipeline/window-errors.js';
import { type TimeWindowEvent, WINDOW_STATE_LIMIT_BYTES } from '../../../src/pipeline/window-event.js';
import { MalformedRecordError } from '../../../src/records/errors.js';
import type { ClassifiedRecord, LambdaStreamRecord } from '../../../src/records/types.js';
import { MemoryDeadLetterSink } from '../../../src/sinks/memory-dead-letter-sink.js';
import { fakeContext, STREAM_ARN, streamRecord } from './fixtures.js';

// The event and response shapes are the Lambda developer guide's ("Using tumbling windows with
// DynamoDB", services-ddb-windows): DynamodbTimeWindowEvent in, TimeWindowEventResponse out.

function windowEvent(
  records: LambdaStreamRecord[],
  state: unknown,
  flags: { final?: boolean; early?: boolean } = {},
): TimeWindowEvent {
  return {
    Records: records,
    window: { start: '2026-01-01T00:00:00Z', end: '2026-01-01T00:05:00Z' },
    state: state as Record<string, unknown>,
    shardId: 'shardId-000000000001',
    eventSourceARN: STREAM_ARN,
    isFinalInvokeForWindow: flags.final ?? false,
    isWindowTerminatedEarly: flags.early ?? false,
  };
}

const ttlDelete = (i: number) => streamRecord(i, { kind: 'ttl-delete' });

const context = () => fakeContext(60_000) as never;

function counter(ended: { state: Record<string, number>; window: WindowInfo }[] = []) {
  return createWindowHandler<Record<string, number>>({
    initial: () => ({}),
    when: 'ttl-delete',
    reduce: (counts, records) => {
      for (const record of records)
        counts[record.tableName ?? '?'] = (counts[record.tableName ?? '?'] ?? 0) + 1;
      return counts;
    },
    onWindowEnd: (state, window) => {
      ended.push({ state, window });
    },
  });
}

describe('createWindowHandler', () => {
  it('folds each invocation into the state Lambda hands back, and gives the final state to onWindowEnd once', async () => {
    const ended: { state: Record<string, number>; window: WindowInfo }[] = [];
    const handler = counter(ended);
    const first = await handler(windowEvent([ttlDelete(1), streamRecord(2), ttlDelete(3)], {}), context());
    expect(first.state).toMatchObject({ value: { orders: 2 } });
    const second = await handler(windowEvent([ttlDelete(4)], first.state), context());
    expect(second.state).toMatchObject({ value: { orders: 3 } });
    expect(ended).toEqual([]);
    const final = await handler(windowEvent([], second.state, { final: true }), context());
    expect(final).toEqual({ state: second.state });
    expect(ended).toEqual([
      {
        state: { orders: 3 },
        window: {
          start: '2026-01-01T00:00:00Z',
          end: '2026-01-01T00:05:00Z',
          shardId: 'shardId-000000000001',
          eventSourceARN: STREAM_ARN,
          terminatedEarly: false,
          // Every record delivered counts for the segment's identity, taken by `when` or not.
          firstSequenceNumber: streamRecord(1).dynamodb.SequenceNumber,
          lastSequenceNumber: streamRecord(4).dynamodb.SequenceNumber,
        },
      },
    ]);
  });

  it('starts from initial() when Lambda opens a window (state {}) and never shares one state between windows', async () => {
    const handler = counter();
    const a = await handler(windowEvent([ttlDelete(1)], {}), context());
    const b = await handler(windowEvent([ttlDelete(2)], {}), context());
    expect(a.state.value).toEqual({ orders: 1 });
    expect(b.state.value).toEqual({ orders: 1 });
  });

  it('folds records of a final invocation before ending the window, and says when the window ended early', async () => {
    const ended: { state: Record<string, number>; window: WindowInfo }[] = [];
    await counter(ended)(windowEvent([ttlDelete(1)], {}, { final: true, early: true }), context());
    expect(ended).toMatchObject([{ state: { orders: 1 }, window: { terminatedEarly: true } }]);
  });

  it("fails the batch with WindowStateTooLargeError when the state passes Lambda's 1 MB", async () => {
    const handler = createWindowHandler<string[]>({
      initial: () => [],
      reduce: (kept, records) => [...kept, ...records.map(() => 'x'.repeat(WINDOW_STATE_LIMIT_BYTES / 2))],
      onWindowEnd: () => undefined,
    });
    const ok = await handler(windowEvent([streamRecord(1)], {}), context());
    const error = await handler(windowEvent([streamRecord(2)], ok.state), context()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WindowStateTooLargeError);
    expect(error).toMatchObject({
      name: 'WindowStateTooLargeError',
      limitBytes: WINDOW_STATE_LIMIT_BYTES,
      windowStart: '2026-01-01T00:00:00Z',
      shardId: 'shardId-000000000001',
      sequenceNumber: streamRecord(2).dynamodb.SequenceNumber,
    });
    expect((error as WindowStateTooLargeError).bytes).toBeGreaterThan(WINDOW_STATE_LIMIT_BYTES);
  });

  it('sends a malformed record to the dead-letter sink and leaves it out of the state', async () => {
    const deadLetter = new MemoryDeadLetterSink();
    const folded: ClassifiedRecord[][] = [];
    const handler = createWindowHandler({
      initial: () => 0,
      reduce: (n, records) => {
        folded.push([...records]);
        return n + records.length;
      },
      onWindowEnd: () => undefined,
      deadLetter,
      clock: () => Date.UTC(2026, 0, 2),
    });
    const bad = streamRecord(2);
    (bad.dynamodb.NewImage as Record<string, unknown>).n = { N: 'twelve' };
    const out = await handler(windowEvent([streamRecord(1), bad, streamRecord(3)], {}), context());
    expect(out.state.value).toBe(2);
    expect(folded[0]?.map((r) => r.sequenceNumber)).toEqual([
      streamRecord(1).dynamodb.SequenceNumber,
      streamRecord(3).dynamodb.SequenceNumber,
    ]);
    expect(deadLetter.entries).toEqual([
      expect.objectContaining({
        reason: 'malformed',
        record: bad,
        eventID: bad.eventID,
        sequenceNumber: bad.dynamodb.SequenceNumber,
        eventSourceARN: STREAM_ARN,
        attempts: 1,
        at: '2026-01-02T00:00:00.000Z',
        error: expect.objectContaining({ name: 'MalformedRecordError' }),
      }),
    ]);
  });

  it('without a dead-letter sink, a malformed record fails the batch (Lambda retries, bisects, or discards it)', async () => {
    const bad = { ...streamRecord(1), eventName: 'UPSERT' } as unknown as LambdaStreamRecord;
    await expect(counter()(windowEvent([bad], {}), context())).rejects.toBeInstanceOf(MalformedRecordError);
  });

  it('refuses an event without a window: the mapping has no tumbling window', async () => {
    const error = await counter()({ Records: [ttlDelete(1)] } as never, context()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotAWindowEventError);
    expect((error as Error).message).toMatch(/tumblingWindowInSeconds/);
  });

  it('checks its options at creation', () => {
    expect(() => createWindowHandler({ initial: () => 0, reduce: (n: number) => n } as never)).toThrow(
      InvalidOptionsError,
    );
    expect(() =>
      createWindowHandler({
        initial: () => 0,
        reduce: (n: number) => n,
        onWindowEnd: () => undefined,
        when: 'ttl' as never,
      }),
    ).toThrow(/when/);
    expect(() =>
      createWindowHandler({
        initial: () => 0,
        reduce: (n: number) => n,
        onWindowEnd: () => undefined,
        typo: 1,
      } as never),
    ).toThrow(/typo/);
  });
});
