// Typed tests of the item-typed filter builder and patterns: `npx tsc --noEmit` compiles test/, so
// a misspelt attribute that stops being refused, or a type that changes, fails the typecheck.
// Each test also runs what it types.
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AttributeFilter,
  compilePattern,
  filterPattern,
  type ItemFilterPattern,
  itemAttributes,
  keyAttribute,
  matchesPattern,
  matching,
  newImageAttribute,
  oldImageAttribute,
} from '../../../src/filters/index.js';
import { parseStreamRecord } from '../../../src/records/index.js';
import type { LambdaStreamRecord } from '../../../src/records/types.js';

interface Order {
  pk: string;
  sk: string;
  status: 'new' | 'paid' | 'shipped';
  total: number;
  address: { city: string; zip: string };
  lines: { sku: string; qty: number }[];
}

const paid: LambdaStreamRecord = {
  eventID: 'e1',
  eventName: 'MODIFY',
  dynamodb: {
    Keys: { pk: { S: 'C#1' }, sk: { S: 'ORDER#1' } },
    NewImage: {
      pk: { S: 'C#1' },
      sk: { S: 'ORDER#1' },
      status: { S: 'paid' },
      total: { N: '10' },
      address: { M: { city: { S: 'Oslo' }, zip: { S: '0150' } } },
      lines: { L: [{ M: { sku: { S: 'A-1' }, qty: { N: '2' } } }] },
    },
    SequenceNumber: '1',
  },
};

describe('the builder, typed by the item', () => {
  it("checks attribute names against the item's fields", () => {
    const pattern = filterPattern(
      keyAttribute<Order>('sk').S.prefix('ORDER#'),
      newImageAttribute<Order>('status').S.equals('paid'),
    );
    expect(matchesPattern(pattern, paid)).toBe(true);
    // @ts-expect-error Order has no field 'stauts'
    expect(() => newImageAttribute<Order>('stauts')).not.toThrow();
    // @ts-expect-error Order has no field 'totl'
    expect(() => oldImageAttribute<Order>('totl')).not.toThrow();
  });

  it('itemAttributes<T>() checks nested maps and list elements too', () => {
    const order = itemAttributes<Order>();
    const pattern = filterPattern(
      order.key('sk').S.prefix('ORDER#'),
      order.newImage('address').M.attribute('city').S.equals('Oslo'),
      order.newImage('lines').L.element().M.attribute('sku').S.prefix('A-'),
    );
    expect(matchesPattern(pattern, paid)).toBe(true);
    // @ts-expect-error address has no member 'street'
    expect(() => order.oldImage('address').M.attribute('street')).not.toThrow();
    // @ts-expect-error a line has no 'price'
    expect(() => order.newImage('lines').L.element().M.attribute('price')).not.toThrow();
    // @ts-expect-error Order has no field 'stauts'
    expect(() => order.newImage('stauts')).not.toThrow();
    expectTypeOf(order.newImage('address')).toEqualTypeOf<AttributeFilter<Order['address']>>();
  });

  it('without an item type, any name goes (as before)', () => {
    expect(matchesPattern(newImageAttribute('anything').S.exists(), paid)).toBe(false);
    expectTypeOf(newImageAttribute).parameter(0).toEqualTypeOf<string>();
  });
});

describe('patterns typed by the item', () => {
  it('matchesPattern<T>, compilePattern<T> and matching<T> refuse a condition on a field T lacks', () => {
    const pattern = {
      eventName: ['MODIFY'],
      dynamodb: { NewImage: { status: { S: ['paid'] }, address: { M: { city: { S: ['Oslo'] } } } } },
    } satisfies ItemFilterPattern<Order>;
    expect(matchesPattern<Order>(pattern, paid)).toBe(true);
    expect(compilePattern<Order>(pattern)(paid)).toBe(true);
    expect(matching<Order>(pattern)(parseStreamRecord(paid))).toBe(true);
    // @ts-expect-error Order has no field 'stauts'
    expect(matchesPattern<Order>({ dynamodb: { NewImage: { stauts: { S: ['paid'] } } } }, paid)).toBe(false);
    const street = {
      // @ts-expect-error address has no member 'street'
      dynamodb: { OldImage: { address: { M: { street: { S: ['x'] } } } } },
    } satisfies ItemFilterPattern<Order>;
    expect(compilePattern<Order>(street as ItemFilterPattern<Order>)(paid)).toBe(false);
    expect(
      // @ts-expect-error a line has no 'price'
      matching<Order>({ dynamodb: { NewImage: { lines: { L: { M: { price: { N: ['1'] } } } } } } })(
        parseStreamRecord(paid),
      ),
    ).toBe(false);
  });

  it('$or alternatives are checked the same way', () => {
    const either: ItemFilterPattern<Order> = {
      $or: [
        { dynamodb: { NewImage: { status: { S: ['new'] } } } },
        { dynamodb: { Keys: { sk: { S: [{ prefix: 'ORDER#' }] } } } },
      ],
    };
    expect(matchesPattern<Order>(either, paid)).toBe(true);
    const wrong: ItemFilterPattern<Order> = {
      $or: [
        // @ts-expect-error Order has no field 'state'
        { dynamodb: { NewImage: { state: { S: ['new'] } } } },
        { eventName: ['INSERT'] },
      ],
    };
    expect(matchesPattern(wrong as never, paid)).toBe(false);
  });
});
