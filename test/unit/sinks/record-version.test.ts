import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRecordParser } from '../../../src/records/parse.js';
import type { LambdaStreamRecord } from '../../../src/records/types.js';
import { itemKeyOf, recordVersion, UnversionedRecordError } from '../../../src/sinks/record-version.js';

function raw(seconds: number | undefined, sequence: string, keys = { pk: { S: 'a' } }): LambdaStreamRecord {
  return {
    eventID: `e${sequence}`,
    eventName: 'INSERT',
    dynamodb: {
      ...(seconds === undefined ? {} : { ApproximateCreationDateTime: seconds }),
      Keys: keys,
      NewImage: keys,
      SequenceNumber: sequence,
    },
  };
}

const stream = createRecordParser();
const backfill = (snapshotTime: number) =>
  createRecordParser({ origin: { source: 'backfill', from: 'export', snapshotTime } });

const seconds = fc.integer({ min: 1_600_000_000, max: 4_000_000_000 });
const sequence = fc.bigInt({ min: 1n, max: 10n ** 40n - 1n }).map(String);

describe('recordVersion', () => {
  it('orders stream records by creation second, then sequence number (of any length)', () => {
    fc.assert(
      fc.property(seconds, sequence, seconds, sequence, (s1, q1, s2, q2) => {
        const a = recordVersion(stream(raw(s1, q1)));
        const b = recordVersion(stream(raw(s2, q2)));
        const expected = s1 !== s2 ? s1 < s2 : BigInt(q1) < BigInt(q2);
        expect(a < b).toBe(expected);
      }),
    );
  });

  it('puts a backfill copy before every stream record of its snapshot second and after every earlier one', () => {
    fc.assert(
      fc.property(
        seconds,
        fc.integer({ min: 0, max: 999 }),
        sequence,
        fc.integer({ min: -3, max: 3 }),
        (s, ms, q, d) => {
          const copy = recordVersion(backfill(s * 1000 + ms)(raw(s, '1')));
          const live = recordVersion(stream(raw(s + d, q)));
          // The tie rule: the stream's record of the snapshot's second wins.
          expect(copy < live).toBe(d >= 0);
        },
      ),
    );
  });

  it('at a coarser resolution, puts a copy before every stream record of its step (DynamoDB Local: the minute)', () => {
    fc.assert(
      fc.property(
        seconds,
        fc.integer({ min: 0, max: 59_999 }),
        sequence,
        fc.integer({ min: -200, max: 200 }),
        (s, ms, q, d) => {
          const minute = Math.floor(s / 60) * 60;
          const copy = recordVersion(backfill(minute * 1000 + ms)(raw(s, '1')), 60);
          const live = recordVersion(stream(raw(minute + d, q)), 60);
          expect(copy < live).toBe(d >= 0);
        },
      ),
    );
  });

  it('orders two backfill snapshots by their milliseconds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_600_000_000_000, max: 4_000_000_000_000 }),
        fc.integer({ min: 1, max: 5_000 }),
        (t, d) => {
          expect(
            recordVersion(backfill(t)(raw(1_700_000_000, '1'))) <
              recordVersion(backfill(t + d)(raw(1_700_000_000, '1'))),
          ).toBe(true);
        },
      ),
    );
  });

  it('orders two backfill snapshots by time at every allowed resolution (a 101 s step and up included)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3_600 }),
        fc.integer({ min: 1_600_000_000_000, max: 4_000_000_000_000 }),
        fc.integer({ min: 0, max: 7_200_000 }),
        (resolution, t, d) => {
          const a = recordVersion(backfill(t)(raw(1_700_000_000, '1')), resolution);
          const b = recordVersion(backfill(t + d)(raw(1_700_000_000, '1')), resolution);
          expect(a < b).toBe(d > 0);
          expect(a === b).toBe(d === 0);
        },
      ),
    );
  });

  it('orders 99.999 s before 100 s of the same 101 s step (the width of the milliseconds)', () => {
    const step = 1_700_000_000 - (1_700_000_000 % 101);
    const early = recordVersion(backfill(step * 1000 + 99_999)(raw(1_700_000_000, '1')), 101);
    const late = recordVersion(backfill(step * 1000 + 100_000)(raw(1_700_000_000, '1')), 101);
    expect(early < late).toBe(true);
  });

  it('keeps the 5-digit milliseconds of versions written before, up to a 100 s step', () => {
    expect(recordVersion(backfill(1_700_000_000_123)(raw(1_700_000_000, '1')))).toBe('01700000000.000123');
    expect(recordVersion(backfill(1_700_000_099_999)(raw(1_700_000_000, '1')), 100)).toBe(
      '01700000000.099999',
    );
  });

  it('refuses a stream record without a creation time, naming it', () => {
    const record = stream(raw(undefined, '42'));
    expect(() => recordVersion(record)).toThrow(UnversionedRecordError);
    expect(() => recordVersion(record)).toThrow(/sequenceNumber=42/);
  });
});

describe('itemKeyOf', () => {
  it('is the same for the same key whatever the attribute order, and differs by type and value', () => {
    const a = stream(
      raw(1_700_000_000, '1', {
        pk: { S: 'x' },
        sk: { N: '12345678901234567890123456789012345678' },
      } as never),
    );
    const b = stream({
      ...raw(1_700_000_000, '2'),
      dynamodb: {
        ...raw(1_700_000_000, '2').dynamodb,
        Keys: { sk: { N: '12345678901234567890123456789012345678' }, pk: { S: 'x' } },
      },
    } as never);
    const c = stream(
      raw(1_700_000_000, '3', {
        pk: { S: 'x' },
        sk: { S: '12345678901234567890123456789012345678' },
      } as never),
    );
    expect(itemKeyOf(a)).toBe(itemKeyOf(b));
    expect(itemKeyOf(a)).not.toBe(itemKeyOf(c));
  });

  it('names one item for a number key however it is spelled (DynamoDB Local MODIFY: the request text)', () => {
    const spelled = (n: string, seq: string) =>
      stream(raw(1_700_000_000, seq, { pk: { S: 'x' }, sk: { N: n } } as never));
    const ids = new Set(
      ['1.5', '1.50', '15E-1', '0.15e1', '+1.5'].map((n, i) => itemKeyOf(spelled(n, String(i + 1)))),
    );
    expect(ids.size).toBe(1);
    expect(itemKeyOf(spelled('1.51', '9'))).not.toBe([...ids][0]);
  });
});
