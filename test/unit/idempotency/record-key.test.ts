import { describe, expect, it } from 'vitest';
import { keyPayloadOf } from '../../../src/idempotency/record-key.js';
import { MalformedRecordError } from '../../../src/records/errors.js';
import { createRecordParser } from '../../../src/records/parse.js';

const parse = createRecordParser();

function change(eventID: string, sk: Record<string, string>, sequence = '100') {
  return parse({
    eventID,
    eventName: 'MODIFY',
    dynamodb: {
      Keys: { pk: { S: 'order' }, sk },
      SequenceNumber: sequence,
      ApproximateCreationDateTime: 1_700_000_000,
    },
  });
}

describe("keyPayloadOf 'item-change'", () => {
  it('names one change alike whatever spelling its number or binary key arrives in (a replay, a re-export)', () => {
    const ids = [
      change('live', { N: '1.50' }),
      change('archive', { N: '1.5' }),
      change('export', { N: '15E-1' }),
    ].map((r) => keyPayloadOf('item-change', r).id);
    expect(new Set(ids).size).toBe(1);
    const binary = [change('a', { B: 'AQI=' }), change('b', { B: 'AQI' })].map(
      (r) => keyPayloadOf('item-change', r).id,
    );
    expect(binary[0]).toBe(binary[1]);
  });

  it('tells apart another item and another change of the item', () => {
    const base = keyPayloadOf('item-change', change('e', { N: '1.5' })).id;
    expect(keyPayloadOf('item-change', change('e', { N: '1.51' })).id).not.toBe(base);
    expect(keyPayloadOf('item-change', change('e', { S: '1.5' })).id).not.toBe(base);
    expect(keyPayloadOf('item-change', change('e', { N: '1.5' }, '101')).id).not.toBe(base);
  });

  it('fails a record whose key DynamoDB could not hold, naming the record', () => {
    const bad = change('bad', { N: '1.5' });
    (bad.raw.dynamodb.Keys as Record<string, unknown>).sk = { BOOL: true };
    expect(() => keyPayloadOf('item-change', bad)).toThrow(MalformedRecordError);
  });

  it("keeps 'eventID' and a function as they were", () => {
    const record = change('e7', { N: '1.5' });
    expect(keyPayloadOf('eventID', record)).toEqual({ id: 'e7' });
    expect(keyPayloadOf((r) => `x${r.eventID}`, record)).toEqual({ id: 'xe7' });
  });
});
