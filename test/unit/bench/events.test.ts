import { describe, expect, it } from 'vitest';
import {
  EVENT_MIX,
  generateBatches,
  generateEvent,
  generateRecords,
  TTL_ATTRIBUTE,
} from '../../../bench/lib/events.js';
import { createRandom } from '../../../bench/lib/random.js';
import { parseStreamEvent } from '../../../src/records/index.js';
import type { AttributeValue, LambdaStreamRecord } from '../../../src/records/types.js';

function typesIn(value: AttributeValue, into: Set<string>): void {
  for (const key of Object.keys(value)) into.add(key);
  if (value.M !== undefined) for (const v of Object.values(value.M)) typesIn(v, into);
  if (value.L !== undefined) for (const v of value.L) typesIn(v, into);
}

describe('bench event generator', () => {
  it('is deterministic per seed and differs across seeds', () => {
    const a = generateRecords({ seed: 42, count: 200 });
    const b = generateRecords({ seed: 42, count: 200 });
    const c = generateRecords({ seed: 43, count: 200 });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(a)).not.toBe(JSON.stringify(c));
  });

  it('produces the stated mix, classified as such by the record core', () => {
    const records = parseStreamEvent(generateEvent({ seed: 7, count: 4000 }));
    const counts = { insert: 0, modify: 0, 'user-delete': 0, 'ttl-delete': 0 };
    for (const r of records) counts[r.kind]++;
    expect(counts.insert / 4000).toBeCloseTo(EVENT_MIX.insert, 1);
    expect(counts.modify / 4000).toBeCloseTo(EVENT_MIX.modify, 1);
    expect(Math.abs(counts['user-delete'] / 4000 - EVENT_MIX.userDelete)).toBeLessThan(0.015);
    expect(Math.abs(counts['ttl-delete'] / 4000 - EVENT_MIX.ttlDelete)).toBeLessThan(0.015);
  });

  it('gives each event name the images of NEW_AND_OLD_IMAGES and TTL deletes the service identity', () => {
    for (const r of generateRecords({ seed: 3, count: 1000 })) {
      const d = r.dynamodb;
      expect(d.StreamViewType).toBe('NEW_AND_OLD_IMAGES');
      expect(d.NewImage !== undefined).toBe(r.eventName !== 'REMOVE');
      expect(d.OldImage !== undefined).toBe(r.eventName !== 'INSERT');
      if (r.userIdentity !== undefined) {
        expect(r.eventName).toBe('REMOVE');
        expect(r.userIdentity).toEqual({ type: 'Service', principalId: 'dynamodb.amazonaws.com' });
        // A TTL delete removes an item that had expired by then.
        expect(Number(d.OldImage?.[TTL_ATTRIBUTE]?.N)).toBeLessThan(d.ApproximateCreationDateTime as number);
      }
      expect(r.eventSourceARN).toMatch(/^arn:aws:dynamodb:us-east-1:\d{12}:table\/bench-items\/stream\//);
      expect(Number.isInteger(d.ApproximateCreationDateTime)).toBe(true);
    }
  });

  it('uses every attribute type, base64 binary, 38-digit numbers, and ~1 KB items', () => {
    const records = generateRecords({ seed: 11, count: 500 });
    const types = new Set<string>();
    let images = 0;
    let bytes = 0;
    let longNumbers = 0;
    for (const r of records) {
      for (const image of [r.dynamodb.NewImage, r.dynamodb.OldImage]) {
        if (image === undefined) continue;
        images++;
        bytes += JSON.stringify(image).length;
        for (const v of Object.values(image)) typesIn(v, types);
        if (image.ledger?.N !== undefined) {
          expect(image.ledger.N).toMatch(/^[1-9]\d{37}$/);
          longNumbers++;
        }
        expect(Buffer.from(image.avatar?.B as string, 'base64').toString('base64')).toBe(image.avatar?.B);
      }
    }
    expect([...types].sort()).toEqual(['B', 'BOOL', 'BS', 'L', 'M', 'N', 'NS', 'NULL', 'S', 'SS']);
    expect(longNumbers).toBeGreaterThan(images * 0.1);
    expect(bytes / images).toBeGreaterThan(800);
    expect(bytes / images).toBeLessThan(1400);
  });

  it('numbers records with strictly increasing sequence numbers and non-decreasing times', () => {
    const records = generateRecords({ seed: 5, count: 1000, firstSequence: '100' });
    let previous: LambdaStreamRecord | undefined;
    for (const r of records) {
      if (previous !== undefined) {
        expect(BigInt(r.dynamodb.SequenceNumber) > BigInt(previous.dynamodb.SequenceNumber)).toBe(true);
        expect(r.dynamodb.ApproximateCreationDateTime).toBeGreaterThanOrEqual(
          previous.dynamodb.ApproximateCreationDateTime as number,
        );
      }
      previous = r;
    }
    expect(new Set(records.map((r) => r.eventID)).size).toBe(records.length);
  });

  it('cuts batches from one stream and rejects unknown options', () => {
    const batches = generateBatches(9, 100, 3);
    expect(batches.map((b) => b.Records.length)).toEqual([100, 100, 100]);
    expect(batches.flatMap((b) => b.Records)).toEqual(generateRecords({ seed: 9, count: 300 }));
    expect(() => generateRecords({ seed: 1, count: 1, sead: 2 } as never)).toThrow(/unknown option 'sead'/);
    expect(() => generateRecords({ seed: 1, count: -1 })).toThrow(/count/);
  });
});

describe('seeded random', () => {
  it('repeats per seed and stays in range', () => {
    const a = createRandom(1);
    const b = createRandom(1);
    for (let i = 0; i < 1000; i++) {
      const x = a.next();
      expect(b.next()).toBe(x);
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
      const n = a.int(3, 5);
      b.int(3, 5);
      expect([3, 4, 5]).toContain(n);
    }
    expect(createRandom(2).digits(38)).toMatch(/^[1-9]\d{37}$/);
    expect(() => createRandom(1.5)).toThrow(/integer/);
  });
});
