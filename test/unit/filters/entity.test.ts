import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { entity, matchesPattern, toFilterCriteria } from '../../../src/filters/index.js';
import { parseStreamRecord } from '../../../src/records/index.js';
import type { AttributeMap, LambdaStreamRecord } from '../../../src/records/types.js';

function record(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  keys: AttributeMap,
  images: { NewImage?: AttributeMap; OldImage?: AttributeMap },
): LambdaStreamRecord {
  return {
    eventID: 'e1',
    eventName,
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/app/stream/2026-01-01T00:00:00.000',
    dynamodb: { Keys: keys, ...images, SequenceNumber: '100', StreamViewType: 'NEW_AND_OLD_IMAGES' },
  };
}

const orderKeys = { pk: { S: 'CUSTOMER#1' }, sk: { S: 'ORDER#7' } };
const orderItem = { ...orderKeys, entityType: { S: 'ORDER' }, total: { N: '3' } };
const customerKeys = { pk: { S: 'CUSTOMER#1' }, sk: { S: 'PROFILE' } };
const customerItem = { ...customerKeys, entityType: { S: 'CUSTOMER' } };

describe('entity()', () => {
  it('by key prefix: matches inserts, modifies and deletes of that entity, from the keys alone', () => {
    const orders = entity({ attribute: 'sk', prefix: 'ORDER#' });
    const cases: [LambdaStreamRecord, boolean][] = [
      [record('INSERT', orderKeys, { NewImage: orderItem }), true],
      [record('MODIFY', orderKeys, { NewImage: orderItem, OldImage: orderItem }), true],
      [record('REMOVE', orderKeys, {}), true],
      [record('INSERT', customerKeys, { NewImage: customerItem }), false],
    ];
    for (const [raw, expected] of cases) {
      expect(orders.test(parseStreamRecord(raw))).toBe(expected);
      // The same selection as its pattern on an event source mapping.
      expect(matchesPattern(orders.pattern, raw)).toBe(expected);
    }
    expect(orders.description).toBe('sk begins_with "ORDER#"');
  });

  it('by attribute: NewImage, or OldImage for a delete that carries it', () => {
    const orders = entity({ attribute: 'entityType', equals: 'ORDER' });
    expect(orders.test(parseStreamRecord(record('INSERT', orderKeys, { NewImage: orderItem })))).toBe(true);
    expect(orders.test(parseStreamRecord(record('REMOVE', orderKeys, { OldImage: orderItem })))).toBe(true);
    expect(orders.test(parseStreamRecord(record('INSERT', customerKeys, { NewImage: customerItem })))).toBe(
      false,
    );
    // A KEYS_ONLY delete has no entityType to read: not this entity's, as the filter would say.
    expect(orders.test(parseStreamRecord(record('REMOVE', orderKeys, {})))).toBe(false);
    expect(entity({ attribute: 'entityType', equals: ['ORDER', 'RETURN'] }).description).toBe(
      'entityType in "ORDER", "RETURN"',
    );
  });

  it('gives a pattern the event source mapping takes', () => {
    const criteria = toFilterCriteria([entity({ attribute: 'sk', prefix: 'ORDER#' }).pattern]);
    expect(JSON.parse(criteria.Filters[0]!.Pattern)).toEqual({
      $or: [
        { dynamodb: { Keys: { sk: { S: [{ prefix: 'ORDER#' }] } } } },
        { dynamodb: { NewImage: { sk: { S: [{ prefix: 'ORDER#' }] } } } },
        { dynamodb: { OldImage: { sk: { S: [{ prefix: 'ORDER#' }] } } } },
      ],
    });
  });

  it.each([
    [{ attribute: 'sk' }, /exactly one of 'equals' and 'prefix'/],
    [{ attribute: 'sk', equals: 'A', prefix: 'B' }, /exactly one of 'equals' and 'prefix'/],
    [{ attribute: '', equals: 'A' }, /option 'attribute'/],
    [{ attribute: 'sk', equals: [] }, /option 'equals' must be a string or a non-empty list/],
    [{ attribute: 'sk', prefx: 'A' }, /unknown option 'prefx'/],
  ])('refuses %j', (spec, message) => {
    expect(() => entity(spec as never)).toThrow(InvalidOptionsError);
    expect(() => entity(spec as never)).toThrow(message);
  });
});
