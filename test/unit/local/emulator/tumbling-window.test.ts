import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';
import {
  isoSecond,
  openSegment,
  windowEvent,
  windowSpanOf,
} from '../../../../src/local/emulator/tumbling-window.js';

// Lambda developer guide, "Using tumbling windows with DynamoDB" (services-ddb-windows): windows
// "open and close at regular intervals", their boundaries "based on the time when records were
// inserted into the stream"; the event is the guide's DynamodbTimeWindowEvent.
describe('windowSpanOf (services-ddb-windows: boundaries from ApproximateCreationDateTime)', () => {
  it('places a record in the window of width W that starts at a multiple of W since the epoch', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_000_000_000 }),
        fc.integer({ min: 0, max: 999 }),
        fc.integer({ min: 1, max: 900 }),
        (seconds, millis, width) => {
          const builder = new StreamEventBuilder({ now: seconds + millis / 1000 });
          const span = windowSpanOf(builder.insert({ pk: 'a' }), width * 1000, 0);
          const at = seconds * 1000 + millis;
          expect(span.startMs % (width * 1000)).toBe(0);
          expect(span.startMs).toBeLessThanOrEqual(at);
          expect(at).toBeLessThan(span.endMs);
          expect(span.endMs - span.startMs).toBe(width * 1000);
        },
      ),
    );
  });

  it('a 120-second window runs 17:00:00–17:02:00 whatever time its first record has', () => {
    const at = (iso: string) => Date.parse(iso) / 1000;
    const builder = new StreamEventBuilder({ now: at('2020-07-30T17:00:37Z') });
    const span = windowSpanOf(builder.insert({ pk: 'a' }), 120_000, 0);
    expect([isoSecond(span.startMs), isoSecond(span.endMs)]).toEqual([
      '2020-07-30T17:00:00Z',
      '2020-07-30T17:02:00Z',
    ]);
  });

  it('places a record without a creation time by the clock', () => {
    const record = new StreamEventBuilder().insert({ pk: 'a' });
    delete record.dynamodb.ApproximateCreationDateTime;
    expect(windowSpanOf(record, 60_000, Date.UTC(2026, 0, 1, 0, 1, 30)).startMs).toBe(
      Date.UTC(2026, 0, 1, 0, 1),
    );
  });
});

describe('windowEvent (services-ddb-windows: DynamodbTimeWindowEvent)', () => {
  it('carries the records, the window to the second, a copy of the state, the shard, the ARN and both flags', () => {
    const builder = new StreamEventBuilder();
    const records = [builder.insert({ pk: 'a' })];
    const segment = openSegment<unknown>({
      startMs: Date.UTC(2020, 6, 30, 17),
      endMs: Date.UTC(2020, 6, 30, 17, 5),
    });
    segment.state = { '1': 'state1' };
    const event = windowEvent(records, segment, 'shard123456789', 'stream-ARN', {
      final: false,
      terminatedEarly: false,
    });
    expect(event).toEqual({
      Records: records,
      window: { start: '2020-07-30T17:00:00Z', end: '2020-07-30T17:05:00Z' },
      state: { '1': 'state1' },
      shardId: 'shard123456789',
      eventSourceARN: 'stream-ARN',
      isFinalInvokeForWindow: false,
      isWindowTerminatedEarly: false,
    });
    (event.state as Record<string, unknown>)['1'] = 'changed by the handler';
    expect(segment.state).toEqual({ '1': 'state1' });
  });
});
