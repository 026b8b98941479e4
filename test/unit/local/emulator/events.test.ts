import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StreamEventBuilder, streamEvents } from '../../../../src/local/emulator/events.js';
import { NumberValue, parseStreamEvent, unmarshall } from '../../../../src/records/index.js';

describe('event builders', () => {
  it('build valid Lambda events the record core classifies as insert / modify / user delete / TTL delete', () => {
    const b = streamEvents({ tableName: 'votes', region: 'eu-west-1', accountId: '111122223333' });
    const event = b.event(
      b.insert({ pk: 'a', n: 1 }),
      b.modify({ pk: 'a', n: 1 }, { pk: 'a', n: 2 }),
      b.userDelete({ pk: 'a', n: 2 }),
      b.ttlDelete({ pk: 'b', expiresAt: 1_700_000_000 }),
    );
    const records = parseStreamEvent(event);
    expect(records.map((r) => r.kind)).toEqual(['insert', 'modify', 'user-delete', 'ttl-delete']);
    expect(records[0]?.eventSourceARN).toBe(b.streamArn);
    expect(b.streamArn).toMatch(/^arn:aws:dynamodb:eu-west-1:111122223333:table\/votes\/stream\/\d{4}-/);
    expect(records[0]?.tableName).toBe('votes');
    expect(event.Records[1]?.dynamodb.OldImage).toEqual({ pk: { S: 'a' }, n: { N: '1' } });
    expect(event.Records[2]?.dynamodb.NewImage).toBeUndefined();
    expect(event.Records[3]?.userIdentity).toEqual({
      type: 'Service',
      principalId: 'dynamodb.amazonaws.com',
    });
    expect(event.Records[2]?.userIdentity).toBeUndefined();
  });

  it('hands out strictly increasing 21-digit sequence numbers and unique event IDs', () => {
    const b = new StreamEventBuilder();
    const records = Array.from({ length: 50 }, (_, i) => b.insert({ pk: `k${i}` }));
    const seqs = records.map((r) => BigInt(r.dynamodb.SequenceNumber));
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as bigint);
    for (const r of records) expect(r.dynamodb.SequenceNumber).toMatch(/^\d{21}$/);
    expect(new Set(records.map((r) => r.eventID)).size).toBe(50);
  });

  it('marshals exactly: big numbers, sets, binary, nested values round-trip', () => {
    const b = new StreamEventBuilder({ keyAttributes: ['pk', 'sk'] });
    const item = {
      pk: 'p',
      sk: 7,
      big: new NumberValue('12345678901234567890123456789012345678'),
      tags: new Set(['x', 'y']),
      blob: new Uint8Array([0, 1, 255]),
      nested: { list: [1, 'two', null, true] },
    };
    const record = b.insert(item);
    expect(record.dynamodb.Keys).toEqual({ pk: { S: 'p' }, sk: { N: '7' } });
    expect(record.dynamodb.NewImage?.big).toEqual({ N: '12345678901234567890123456789012345678' });
    expect(record.dynamodb.NewImage?.blob).toEqual({ B: 'AAH/' });
    const back = unmarshall(record.dynamodb.NewImage ?? {});
    expect(String(back.big)).toBe('12345678901234567890123456789012345678');
    expect(back.tags).toEqual(new Set(['x', 'y']));
  });

  it('respects the stream view type and fails clearly on a missing key attribute', () => {
    const keysOnly = new StreamEventBuilder({ streamViewType: 'KEYS_ONLY' });
    const r = keysOnly.modify({ pk: 'a', v: 1 }, { pk: 'a', v: 2 });
    expect(r.dynamodb.NewImage).toBeUndefined();
    expect(r.dynamodb.OldImage).toBeUndefined();
    expect(r.dynamodb.StreamViewType).toBe('KEYS_ONLY');
    expect(() => keysOnly.insert({ id: 'no-pk' })).toThrow(/no key attribute 'pk'/);
    expect(() => new StreamEventBuilder({ table: 'x' } as never)).toThrow(/unknown option 'table'/);
  });

  it('any plain string-keyed item becomes a record the parser accepts', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== 'pk'),
          fc.oneof(fc.string(), fc.integer(), fc.boolean()),
        ),
        fc.string({ minLength: 1 }),
        (rest, pk) => {
          const b = new StreamEventBuilder();
          const [record] = parseStreamEvent(b.event(b.insert({ ...rest, pk })));
          expect(record?.keys).toEqual({ pk });
          expect(record?.newImage).toEqual({ ...rest, pk });
        },
      ),
    );
  });
});
