// A user's typed routes, against the installed package: orders validated with zod reach a sink typed
// by the schema's output, an invalid one is dead-lettered with its issues, and valibot's output
// types the kind handlers. `npm test` runs tsc first, so the expectTypeOf lines are checked too.
import {
  createPipeline,
  entity,
  type InsertRecord,
  MemoryDeadLetterSink,
  MemorySink,
  route,
  validated,
} from 'tidewater';
import { streamEvents } from 'tidewater/testing';
import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';

const orderSchema = z.object({
  pk: z.string(),
  sk: z.string().startsWith('ORDER#'),
  total: z.number().nonnegative(),
  status: z.enum(['new', 'paid']).default('new'),
});
type Order = z.infer<typeof orderSchema>;

describe('typed, validated orders', () => {
  it('zod: the sink gets InsertRecord<Order>, an invalid order goes to the dead letters', async () => {
    const orders = new MemorySink<InsertRecord<Order>>({ name: 'orders' });
    const deadLetter = new MemoryDeadLetterSink();
    const pipeline = createPipeline({
      routes: [
        route({
          when: 'insert',
          entity: entity({ attribute: 'sk', prefix: 'ORDER#' }),
          item: validated(orderSchema),
          to: orders,
        }),
      ],
      deadLetter,
      metrics: false,
    });
    const b = streamEvents({ tableName: 'orders' });
    const response = await pipeline.process(
      b.event(
        b.insert({ pk: 'C#1', sk: 'ORDER#1', total: 20 }),
        b.insert({ pk: 'C#1', sk: 'ORDER#2', total: -5 }),
        b.insert({ pk: 'C#1', sk: 'PROFILE' }),
      ),
    );
    expect(response.batchItemFailures).toEqual([]);
    expectTypeOf(orders.records[0]!.newImage).toEqualTypeOf<Order | undefined>();
    expect(orders.records.map((r) => r.newImage)).toEqual([
      { pk: 'C#1', sk: 'ORDER#1', total: 20, status: 'new' },
    ]);
    expect(deadLetter.entries).toHaveLength(1);
    expect(deadLetter.entries[0]).toMatchObject({
      reason: 'invalid-image',
      error: { name: 'InvalidImageError' },
    });
    expect(deadLetter.entries[0]!.issues?.map((i) => i.path)).toEqual([['total']]);
  });

  it('valibot: the kind handlers receive the output type', async () => {
    const schema = v.object({
      sk: v.string(),
      total: v.pipe(
        v.number(),
        v.transform((t) => t * 100),
      ),
    });
    const cents: number[] = [];
    const pipeline = createPipeline({
      handlers: {
        item: validated(schema),
        insert: (record) => {
          expectTypeOf(record.newImage).toEqualTypeOf<{ sk: string; total: number } | undefined>();
          if (record.newImage) cents.push(record.newImage.total);
        },
      },
      metrics: false,
    });
    const b = streamEvents({ tableName: 'orders' });
    await pipeline.process(b.event(b.insert({ pk: 'C#1', sk: 'ORDER#1', total: 2.5 })));
    expect(cents).toEqual([250]);
  });
});
