// Typed tests: `npx tsc --noEmit` compiles test/, so an expectTypeOf that no longer holds, or an
// expected error that no longer happens, fails the typecheck if the item types regress. Each test
// also runs what it types, so it asserts at run time too.
import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { entity } from '../../../src/filters/index.js';
import {
  createPipeline,
  createStreamHandler,
  type HandlerContext,
  processBatch,
  route,
  validated,
} from '../../../src/pipeline/index.js';
import type {
  ClassifiedRecord,
  InsertRecord,
  ModifyRecord,
  TtlDeleteRecord,
} from '../../../src/records/types.js';
import { MemorySink } from '../../../src/sinks/memory-sink.js';
import type { Sink } from '../../../src/sinks/types.js';
import { batch, quiet } from './fixtures.js';

const zodItem = z.object({ pk: z.string(), n: z.coerce.number() });
type ZodItem = z.infer<typeof zodItem>;
const valibotItem = v.object({
  pk: v.string(),
  n: v.pipe(
    v.number(),
    v.transform((n) => `#${n}`),
  ),
});
type ValibotItem = v.InferOutput<typeof valibotItem>;

/** A sink that keeps what it was given, typed by the records it takes. */
function keeping<R extends ClassifiedRecord<object>>(name: string): Sink<R> & { got: R[] } {
  const got: R[] = [];
  return {
    name,
    got,
    write(records) {
      got.push(...records);
      return undefined;
    },
  };
}

describe('item types through route()', () => {
  it('a zod schema types the sink with its output: InsertRecord<{ pk: string; n: number }>', async () => {
    const sink = keeping<InsertRecord<ZodItem>>('orders');
    const config = { ...quiet, routes: [route({ when: 'insert', item: validated(zodItem), to: sink })] };
    await processBatch(batch(2), config);
    expectTypeOf(sink.got[0]!.newImage).toEqualTypeOf<ZodItem | undefined>();
    expect(sink.got.map((r) => r.newImage)).toEqual([
      { pk: 'item-0', n: 0 },
      { pk: 'item-1', n: 1 },
    ]);
  });

  it('a valibot schema does the same, with its output type (a transform)', async () => {
    const sink = keeping<InsertRecord<ValibotItem>>('orders');
    await processBatch(batch(1), {
      ...quiet,
      routes: [route({ when: 'insert', item: validated(valibotItem), to: sink })],
    });
    expectTypeOf(sink.got[0]!.newImage).toEqualTypeOf<{ pk: string; n: string } | undefined>();
    expect(sink.got.map((r) => r.newImage)).toEqual([{ pk: 'item-0', n: '#0' }]);
  });

  it('refuses a sink typed for a narrower item than the route delivers', () => {
    const typed = keeping<InsertRecord<ZodItem>>('typed');
    // Without a schema the route delivers plain Items: a sink of ZodItem would get unchecked images.
    // @ts-expect-error InsertRecord<Item> is not InsertRecord<ZodItem>
    const unchecked = route({ when: 'insert', to: typed });
    // A sink of the wrong kind is refused as before.
    const ttl = keeping<TtlDeleteRecord>('ttl');
    // @ts-expect-error an insert route cannot feed a TTL-delete sink
    const wrongKind = route({ when: 'insert', to: ttl });
    // A sink taking any record takes the validated ones.
    const any = keeping<ClassifiedRecord>('any');
    const fine = route({ when: ['insert', 'modify'], item: validated(zodItem), to: any });
    expect([unchecked.to, wrongKind.to, fine.to]).toEqual([typed, ttl, any]);
  });

  it('entity<T>() types a route without checking; a schema given with it wins', () => {
    interface Order {
      pk: string;
      total: number;
    }
    const orders = entity<Order>({ attribute: 'pk', prefix: 'ORDER#' });
    const typedOnly = keeping<ModifyRecord<Order>>('orders');
    const checked = keeping<ModifyRecord<ZodItem>>('checked');
    const a = route({ when: 'modify', entity: orders, to: typedOnly });
    const item = validated(zodItem);
    const b = route({ when: 'modify', entity: orders, item, to: checked });
    expectTypeOf(orders).toHaveProperty('test').toEqualTypeOf<(record: ClassifiedRecord) => boolean>();
    expect([a.entity, b.item]).toEqual([orders, item]);
  });

  it('a predicate route types its sinks by the item alone', () => {
    const sink = keeping<ClassifiedRecord<ZodItem>>('all');
    const r = route({ when: (record) => record.kind !== 'ttl-delete', item: validated(zodItem), to: sink });
    expect(typeof r.when).toBe('function');
  });
});

describe('sinks constructed inline', () => {
  it('infer their records from the route: `to: new MemorySink()` compiles and receives the records', async () => {
    const ttl = route({ when: 'ttl-delete', to: new MemorySink() });
    const both = route({
      when: ['insert', 'modify'],
      to: [new MemorySink({ name: 'a' }), new MemorySink({ name: 'b' })],
    });
    const sinks = [ttl.to, ...(both.to as readonly MemorySink[])] as MemorySink[];
    await processBatch(
      batch(3, (i) => ({ kind: i === 0 ? 'insert' : i === 1 ? 'modify' : 'ttl-delete' })),
      {
        routes: [ttl, both],
        ...quiet,
      },
    );
    expect(sinks.map((sink) => sink.records.map((record) => record.kind))).toEqual([
      ['ttl-delete'],
      ['insert', 'modify'],
      ['insert', 'modify'],
    ]);
  });

  it('still refuses a sink typed for other kinds than the route takes', () => {
    const inserts = new MemorySink<InsertRecord>();
    // @ts-expect-error an insert sink cannot take TTL deletes
    const r = route({ when: 'ttl-delete', to: inserts });
    expect(r.to).toBe(inserts);
  });
});

describe('item types through the kind handlers', () => {
  it('handlers.item types each handler with the schema output, narrowed to its kind', async () => {
    const seen: ZodItem[] = [];
    const handler = createStreamHandler({
      ...quiet,
      handlers: {
        item: validated(zodItem),
        insert: (record, context) => {
          expectTypeOf(record).toEqualTypeOf<InsertRecord<ZodItem>>();
          expectTypeOf(context).toEqualTypeOf<HandlerContext>();
          if (record.newImage !== undefined) seen.push(record.newImage);
        },
        modify: (record) => {
          expectTypeOf(record.oldImage).toEqualTypeOf<ZodItem | undefined>();
        },
      },
    });
    await handler(batch(1) as never, {} as never);
    expect(seen).toEqual([{ pk: 'item-0', n: 0 }]);
  });

  it('createStreamHandler<T> types the handlers without a schema (unchecked, like parseStreamEvent<T>)', async () => {
    type Row = { pk: string; n: number };
    const pks: string[] = [];
    const pipeline = createPipeline<Row>({
      ...quiet,
      handlers: {
        insert: (record) => {
          expectTypeOf(record.newImage).toEqualTypeOf<Row | undefined>();
          pks.push(record.newImage!.pk);
        },
      },
    });
    await pipeline.process(batch(2));
    expect(pks).toEqual(['item-0', 'item-1']);
  });

  it('a handler typed for another item than the schema gives is refused', () => {
    const config = {
      ...quiet,
      handlers: {
        item: validated(zodItem),
        insert: (record: InsertRecord<{ pk: string; n: string }>) => record.newImage,
      },
    };
    // @ts-expect-error the schema gives n: number, the handler wants n: string
    expect(() => createPipeline(config)).not.toThrow();
  });
});
