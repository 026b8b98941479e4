import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { entity } from '../../../src/filters/index.js';
import { errorShape } from '../../../src/logging/error-shape.js';
import {
  createPipeline,
  ImageSchemaError,
  InvalidImageError,
  processBatch,
  route,
  type StandardSchemaV1,
  validated,
} from '../../../src/pipeline/index.js';
import { StreamRecord } from '../../../src/records/stream-record.js';
import type { AttributeMap, ClassifiedRecord, LambdaStreamRecord } from '../../../src/records/types.js';
import type { Sink } from '../../../src/sinks/types.js';
import { fakeContext, quiet, RecordingDeadLetter, seq, streamRecord } from './fixtures.js';

/** An order as the table holds it: status one of three, total a number, lines a list. */
const zodOrder = z.object({
  pk: z.string().startsWith('ORDER#'),
  status: z.enum(['new', 'paid', 'shipped']),
  total: z.number().nonnegative(),
  lines: z.array(z.object({ sku: z.string() })).default([]),
});
const valibotOrder = v.object({
  pk: v.pipe(v.string(), v.startsWith('ORDER#')),
  status: v.picklist(['new', 'paid', 'shipped']),
  total: v.pipe(v.number(), v.minValue(0)),
  lines: v.optional(v.array(v.object({ sku: v.string() })), []),
});

function order(i: number, image: AttributeMap, kind: 'insert' | 'modify' | 'user-delete' = 'insert') {
  const record = streamRecord(i, { kind, pk: `ORDER#${i}` });
  if (record.dynamodb.NewImage !== undefined) record.dynamodb.NewImage = image;
  if (record.dynamodb.OldImage !== undefined) record.dynamodb.OldImage = image;
  return record;
}

const good = (i: number): AttributeMap => ({
  pk: { S: `ORDER#${i}` },
  status: { S: 'paid' },
  total: { N: '12.5' },
  extra: { S: 'not in the schema' },
});
const bad = (i: number): AttributeMap => ({
  pk: { S: `ORDER#${i}` },
  status: { S: 'lost' },
  total: { N: '-1' },
  lines: { L: [{ M: { sku: { N: '7' } } }] },
});

/** A sink that keeps the records it is given. */
class Keep implements Sink {
  readonly got: ClassifiedRecord[] = [];
  calls = 0;
  constructor(readonly name: string) {}
  write(records: readonly ClassifiedRecord[]) {
    this.calls++;
    this.got.push(...records);
    return undefined;
  }
}

describe.each([
  ['zod', zodOrder],
  ['valibot', valibotOrder],
] as const)('a route with a %s item schema', (vendor, schema) => {
  it('gives its sink the schema output and dead-letters an invalid image with the issues, never retried', async () => {
    const sink = new Keep('orders');
    const dlq = new RecordingDeadLetter();
    const event = { Records: [order(0, good(0)), order(1, bad(1)), order(2, good(2))] };
    const response = await processBatch(event, {
      ...quiet,
      deadLetter: dlq,
      routes: [route({ when: 'insert', item: validated(schema), to: sink })],
    });
    expect(response.batchItemFailures).toEqual([]);
    expect(sink.calls).toBe(1);
    expect(sink.got.map((r) => r.sequenceNumber)).toEqual([seq(0), seq(2)]);
    // The output: defaults applied, unknown keys stripped.
    expect(sink.got[0]!.newImage).toEqual({ pk: 'ORDER#0', status: 'paid', total: 12.5, lines: [] });
    // The rest of the record is the stream record's own: raw stays lossless.
    expect(sink.got[0]!.raw).toBe(event.Records[0]);
    expect(sink.got[0]!.keys).toEqual({ pk: 'ORDER#0' });
    expect(dlq.entries).toHaveLength(1);
    const entry = dlq.entries[0]!;
    expect(entry).toMatchObject({
      reason: 'invalid-image',
      sequenceNumber: seq(1),
      eventID: 'event-1',
      attempts: 0,
      sinkName: 'orders',
      error: { name: 'InvalidImageError' },
      record: event.Records[1],
    });
    expect(entry.error.message).toContain(`(${vendor})`);
    const paths = entry.issues!.map((issue) => issue.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['status', 'total', 'lines.0.sku']));
    for (const issue of entry.issues!) {
      expect(issue.image).toBe('NewImage');
      expect(issue.message.length).toBeGreaterThan(0);
    }
  });

  it("with images: 'all', validates both images of a modify and names the one that failed", async () => {
    const sink = new Keep('orders');
    const dlq = new RecordingDeadLetter();
    const record = order(0, good(0), 'modify');
    record.dynamodb.OldImage = bad(0);
    await processBatch(
      { Records: [record] },
      {
        ...quiet,
        deadLetter: dlq,
        routes: [route({ when: 'modify', item: validated(schema), images: 'all', to: sink })],
      },
    );
    expect(sink.got).toEqual([]);
    expect(dlq.entries).toHaveLength(1);
    const entry = dlq.entries[0]!;
    expect(entry).toMatchObject({ reason: 'invalid-image', error: { name: 'InvalidImageError' } });
    expect(entry.issues!.length).toBeGreaterThan(0);
    for (const issue of entry.issues!) expect(issue.image).toBe('OldImage');
    expect(entry.issues!.map((issue) => issue.path.join('.'))).toEqual(
      expect.arrayContaining(['status', 'total', 'lines.0.sku']),
    );
  });

  it('by default delivers a modify whose OldImage predates the schema, its oldImage left out', async () => {
    const sink = new Keep('orders');
    const dlq = new RecordingDeadLetter();
    const upgraded = order(0, good(0), 'modify');
    upgraded.dynamodb.OldImage = bad(0); // written before the schema was tightened
    const both = order(1, good(1), 'modify'); // both images fit: both are the schema's output
    const broken = order(2, bad(2), 'modify'); // the new image does not fit: dead-lettered
    await processBatch(
      { Records: [upgraded, both, broken] },
      { ...quiet, deadLetter: dlq, routes: [route({ when: 'modify', item: validated(schema), to: sink })] },
    );
    expect(sink.got.map((r) => r.sequenceNumber)).toEqual(
      [upgraded, both].map((r) => r.dynamodb.SequenceNumber),
    );
    expect(sink.got[0]!.newImage).toMatchObject({ status: 'paid', total: 12.5 });
    expect(sink.got[0]!.oldImage).toBeUndefined();
    expect(sink.got[0]!.raw.dynamodb.OldImage).toEqual(bad(0)); // still in the raw record
    expect(sink.got[1]!.oldImage).toMatchObject({ status: 'paid', total: 12.5 });
    expect(dlq.entries.map((e) => [e.sequenceNumber, e.reason, e.issues?.[0]?.image])).toEqual([
      [broken.dynamodb.SequenceNumber, 'invalid-image', 'NewImage'],
    ]);
  });

  it("refuses 'images' without 'item', and a sink reached with two settings", () => {
    const sink = new Keep('orders');
    expect(() => createPipeline({ ...quiet, routes: [{ when: 'modify', images: 'all', to: sink }] })).toThrow(
      /'images' says which images 'item' checks/,
    );
    expect(() =>
      createPipeline({
        ...quiet,
        routes: [
          route({ when: 'modify', item: validated(schema), to: sink }),
          route({ when: 'insert', item: validated(schema), images: 'all', to: sink }),
        ],
      }),
    ).toThrow(/other 'images'/);
  });

  it('validates only the image a delete carries (OldImage) and hands it on', async () => {
    const sink = new Keep('deletes');
    await processBatch(
      { Records: [order(0, good(0), 'user-delete')] },
      { ...quiet, routes: [route({ when: 'user-delete', item: validated(schema), to: sink })] },
    );
    expect(sink.got[0]!.newImage).toBeUndefined();
    expect(sink.got[0]!.oldImage).toMatchObject({ status: 'paid', total: 12.5 });
  });
});

describe('validation and the rest of the pipeline', () => {
  it('leaves routes without a schema lazy: their sinks get the stream record, the invalid one too', async () => {
    const checked = new Keep('checked');
    const archive = new Keep('archive');
    const dlq = new RecordingDeadLetter();
    const event = { Records: [order(0, good(0)), order(1, bad(1))] };
    await processBatch(event, {
      ...quiet,
      deadLetter: dlq,
      routes: [
        route({ when: 'insert', item: validated(zodOrder), to: checked }),
        route({ when: 'insert', to: archive }),
      ],
    });
    expect(checked.got.map((r) => r.sequenceNumber)).toEqual([seq(0)]);
    expect(archive.got.map((r) => r.sequenceNumber)).toEqual([seq(0), seq(1)]);
    // The unvalidated route sees the images as unmarshalled: unknown keys kept, no defaults.
    expect(archive.got[0]!.newImage).toEqual({
      pk: 'ORDER#0',
      status: 'paid',
      total: 12.5,
      extra: 'not in the schema',
    });
    expect(checked.got[0]!.newImage).toEqual({ pk: 'ORDER#0', status: 'paid', total: 12.5, lines: [] });
    expect(archive.got[0]).not.toBe(checked.got[0]);
    expect(checked.got[0]).toBeInstanceOf(StreamRecord);
    expect(dlq.entries.map((e) => e.sinkName)).toEqual(['checked']);
  });

  it('validates a record once per schema, however many sinks share the schema', async () => {
    let calls = 0;
    const counted: StandardSchemaV1<unknown, Record<string, unknown>> = {
      '~standard': {
        version: 1,
        vendor: 'counting',
        validate: (value) => {
          calls++;
          return { value: value as Record<string, unknown> };
        },
      },
    };
    const a = new Keep('a');
    const b = new Keep('b');
    await processBatch(
      { Records: [order(0, good(0)), order(1, good(1), 'modify')] },
      {
        ...quiet,
        routes: [route({ when: ['insert', 'modify'], item: validated(counted), to: [a, b] })],
        handlers: { item: validated(counted), insert: () => undefined },
      },
    );
    // insert: its NewImage; modify: both images. The handlers share the schema object too.
    expect(calls).toBe(3);
    expect(a.got).toHaveLength(2);
    expect(a.got[0]).toBe(b.got[0]);
  });

  it('runs async validators (an async zod refinement) and hands on their output', async () => {
    const asyncOrder = zodOrder.refine(async (o) => o.total < 100, { message: 'too expensive' });
    const sink = new Keep('orders');
    const dlq = new RecordingDeadLetter();
    const pricey = good(1);
    pricey.total = { N: '500' };
    await processBatch(
      { Records: [order(0, good(0)), order(1, pricey)] },
      {
        ...quiet,
        deadLetter: dlq,
        routes: [route({ when: 'insert', item: validated(asyncOrder), to: sink })],
      },
    );
    expect(sink.got.map((r) => r.newImage)).toEqual([
      { pk: 'ORDER#0', status: 'paid', total: 12.5, lines: [] },
    ]);
    expect(dlq.entries[0]!.issues).toEqual([{ image: 'NewImage', path: [], message: 'too expensive' }]);
  });

  it('the kind handlers receive the output; an invalid record is dead-lettered and its handler never runs', async () => {
    const seen: unknown[] = [];
    const dlq = new RecordingDeadLetter();
    const response = await processBatch(
      { Records: [order(0, good(0)), order(1, bad(1))] },
      {
        ...quiet,
        deadLetter: dlq,
        handlers: { item: validated(zodOrder), insert: (record) => void seen.push(record.newImage) },
      },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(seen).toEqual([{ pk: 'ORDER#0', status: 'paid', total: 12.5, lines: [] }]);
    expect(dlq.entries).toMatchObject([
      { reason: 'invalid-image', sinkName: 'handlers', sequenceNumber: seq(1) },
    ]);
  });

  it('without a dead-letter sink an invalid record is reported failed: nothing is lost', async () => {
    const sink = new Keep('orders');
    const response = await processBatch(
      { Records: [order(0, good(0)), order(1, bad(1)), order(2, good(2))] },
      { ...quiet, routes: [route({ when: 'insert', item: validated(zodOrder), to: sink })] },
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(1) }]);
    expect(sink.got.map((r) => r.sequenceNumber)).toEqual([seq(0)]);
  });

  it('a malformed image under a schema is dead-lettered as malformed', async () => {
    const sink = new Keep('orders');
    const dlq = new RecordingDeadLetter();
    const broken = order(0, { ...good(0), total: { N: 'twelve' } });
    await processBatch(
      { Records: [broken, order(1, good(1))] },
      { ...quiet, deadLetter: dlq, routes: [route({ when: 'insert', item: validated(zodOrder), to: sink })] },
    );
    expect(dlq.entries).toMatchObject([{ reason: 'malformed', sequenceNumber: seq(0) }]);
    expect(sink.got.map((r) => r.sequenceNumber)).toEqual([seq(1)]);
  });

  it('an entity discriminator narrows a route to one entity type', async () => {
    const orders = new Keep('orders');
    const customers = new Keep('customers');
    const customer = streamRecord(1, { pk: 'CUSTOMER#1' });
    await processBatch(
      { Records: [order(0, good(0)), customer, order(2, good(2), 'modify')] },
      {
        ...quiet,
        routes: [
          route({
            when: ['insert', 'modify'],
            entity: entity({ attribute: 'pk', prefix: 'ORDER#' }),
            item: validated(zodOrder),
            to: orders,
          }),
          route({ when: 'insert', entity: entity({ attribute: 'pk', prefix: 'CUSTOMER#' }), to: customers }),
        ],
      },
    );
    expect(orders.got.map((r) => r.sequenceNumber)).toEqual([seq(0), seq(2)]);
    expect(customers.got.map((r) => r.sequenceNumber)).toEqual([seq(1)]);
  });
});

/** A schema whose validate is `validate`. */
function schemaOf(validate: (value: unknown) => unknown): StandardSchemaV1<unknown, Record<string, unknown>> {
  return {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: validate as StandardSchemaV1.Props<unknown, Record<string, unknown>>['validate'],
    },
  };
}

describe('a schema that fails instead of judging', () => {
  it.each([
    [
      'throws',
      () => {
        throw new TypeError('boom');
      },
      'threw',
    ],
    ['rejects', () => Promise.reject(new Error('lookup failed')), 'threw'],
    ['returns null', () => null, 'bad-result'],
    ['returns issues that are not an array', () => ({ issues: 'bad' }), 'bad-result'],
    ['returns neither value nor issues', () => ({}), 'bad-result'],
    ['outputs a non-object', () => ({ value: 42 }), 'bad-result'],
  ])('%s: the record is dead-lettered with an ImageSchemaError', async (_name, validate, problem) => {
    const sink = new Keep('orders');
    const dlq = new RecordingDeadLetter();
    const response = await processBatch(
      { Records: [order(0, good(0))] },
      {
        ...quiet,
        deadLetter: dlq,
        routes: [route({ when: 'insert', item: validated(schemaOf(validate)), to: sink })],
      },
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(sink.got).toEqual([]);
    expect(dlq.entries).toMatchObject([{ reason: 'invalid-image', error: { name: 'ImageSchemaError' } }]);
    expect(dlq.entries[0]!.error.message).toContain('(test)');
    const error = new ImageSchemaError(
      { eventID: 'e', sequenceNumber: '1' },
      'NewImage',
      'test',
      problem as 'threw',
      'x',
    );
    expect(error.problem).toBe(problem);
  });

  it('still pending one deadline margin before the deadline: dead-lettered, and the records validated are delivered', async () => {
    let hung = 0;
    const hangs = schemaOf((value) => {
      if ((value as { pk?: string }).pk === 'ORDER#1') {
        hung++;
        return new Promise(() => undefined);
      }
      return { value };
    });
    const sink = new Keep('orders');
    const dlq = new RecordingDeadLetter();
    const response = await processBatch(
      { Records: [order(0, good(0)), order(1, good(1)), order(2, good(2))] },
      {
        ...quiet,
        deadLetter: dlq,
        deadlineMarginMs: 20,
        routes: [route({ when: 'insert', item: validated(hangs), to: sink })],
      },
      fakeContext(200),
    );
    expect(hung).toBe(1);
    expect(response.batchItemFailures).toEqual([]);
    expect(sink.got.map((r) => r.sequenceNumber)).toEqual([seq(0), seq(2)]);
    expect(dlq.entries).toMatchObject([
      { reason: 'invalid-image', sequenceNumber: seq(1), error: { name: 'ImageSchemaError' } },
    ]);
    expect(dlq.entries[0]!.error.message).toContain('had not settled');
  });
});

describe('InvalidImageError', () => {
  it('names paths, not the validator messages (they may quote image values), and logs no issues', () => {
    const error = new InvalidImageError({ eventID: 'e1', sequenceNumber: '42' }, 'NewImage', 'valibot', [
      { image: 'NewImage', path: ['total'], message: 'Invalid type: Expected number but received "secret"' },
      { image: 'NewImage', path: ['lines', 0, 'sku'], message: 'Invalid type' },
      { image: 'NewImage', path: ['odd key'], message: 'x' },
    ]);
    expect(error.message).toBe(
      'NewImage of eventID=e1 sequenceNumber=42 does not match its item schema (valibot): 3 issue(s), at total, lines[0].sku, ["odd key"]',
    );
    expect(error.issues).toHaveLength(3);
    expect(JSON.stringify(errorShape(error))).not.toContain('secret');
    expect(error).toMatchObject({ name: 'InvalidImageError', eventID: 'e1', sequenceNumber: '42' });
  });
});

describe('item schema configuration', () => {
  const sink = new Keep('s');
  it.each([
    ['a plain object', { validate: () => ({}) }],
    ['a schema of another spec version', { '~standard': { version: 2, vendor: 'x', validate: () => ({}) } }],
    ['a function', () => true],
  ])('refuses %s as a schema to validate with', (_name, item) => {
    expect(() => validated(item as never)).toThrow(InvalidOptionsError);
    expect(() => validated(item as never)).toThrow(
      /^validated: option 'schema' must be a Standard Schema v1/,
    );
  });

  it('refuses a bare schema as item, naming validated() (which links the validation stage): a type error, and at run time', () => {
    const bare = { ...quiet, routes: [{ when: 'insert' as const, item: zodOrder, to: sink }] };
    // @ts-expect-error a route's item is a validated() schema (ValidatedSchema), not a bare one
    expect(() => createPipeline(bare)).toThrow(InvalidOptionsError);
    // @ts-expect-error the same: JavaScript callers meet the refusal below
    expect(() => createPipeline(bare)).toThrow(
      /option 'routes\[0\]\.item' must be a Standard Schema wrapped by validated\(\) \(import \{ validated \} from 'tidewater'/,
    );
    expect(() =>
      // @ts-expect-error the kind handlers' item too
      createPipeline({ ...quiet, handlers: { item: valibotOrder, insert: () => undefined } }),
    ).toThrow(/option 'handlers\.item' must be a Standard Schema wrapped by validated\(\)/);
    // route() asks for one as well.
    // @ts-expect-error a bare schema where route() wants validated(schema)
    expect(route({ when: 'insert', item: zodOrder, to: sink }).item).toBe(zodOrder);
  });

  it('takes one schema wrapped twice, or in two validated() calls, as one schema', () => {
    const once = validated(zodOrder);
    expect(validated(once)).toBe(once);
    const pipeline = createPipeline({
      ...quiet,
      routes: [
        route({ when: 'insert', item: once, to: sink }),
        route({ when: 'modify', item: validated(zodOrder), to: sink }),
      ],
    });
    expect(pipeline.config.schemas.map((s) => s.schema)).toEqual([zodOrder]);
  });

  it('refuses a sink reached by routes with different schemas (or with and without one)', () => {
    const config = {
      ...quiet,
      routes: [
        route({ when: 'insert', item: validated(zodOrder), to: sink }),
        route({ when: 'modify', to: sink }),
      ],
    };
    expect(() => createPipeline(config)).toThrow(/sink s is reached by routes with different item schemas/);
    const message =
      "pipeline: routes[1]: sink s is reached by routes with different item schemas (or with and without one, or other 'images'); " +
      'a sink takes one: give its routes the same schema (a union for several entities)';
    for (const routes of [
      [route({ when: 'insert', to: sink }), route({ when: 'modify', item: validated(zodOrder), to: sink })],
      [
        route({ when: 'insert', item: validated(zodOrder), to: sink }),
        route({ when: 'modify', item: validated(zodOrder), images: 'all', to: sink }),
      ],
    ]) {
      expect(() => createPipeline({ ...quiet, routes })).toThrow(InvalidOptionsError);
      expect(() => createPipeline({ ...quiet, routes })).toThrow(message);
    }
  });

  it('refuses handlers.item without a handler', () => {
    expect(() =>
      createPipeline({
        ...quiet,
        routes: [route({ when: 'insert', to: sink })],
        handlers: { item: validated(zodOrder) },
      }),
    ).toThrow(/handlers\.item/);
  });

  it('refuses an entity that is not a discriminator', () => {
    const config = {
      ...quiet,
      routes: [{ when: 'insert' as const, entity: { attribute: 'pk' } as never, to: sink }],
    };
    expect(() => createPipeline(config)).toThrow(/routes\[0\]\.entity/);
  });
});

describe('every record ends in exactly one place (property)', () => {
  it('validated to the sink, or dead-lettered; never both, never lost', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ valid: fc.boolean(), kind: fc.constantFrom('insert' as const, 'modify' as const) }),
          {
            minLength: 1,
            maxLength: 30,
          },
        ),
        async (specs) => {
          const records: LambdaStreamRecord[] = specs.map((s, i) =>
            order(i, s.valid ? good(i) : bad(i), s.kind),
          );
          const sink = new Keep('orders');
          const dlq = new RecordingDeadLetter();
          const response = await processBatch(
            { Records: records },
            {
              ...quiet,
              deadLetter: dlq,
              routes: [route({ when: ['insert', 'modify'], item: validated(zodOrder), to: sink })],
            },
          );
          expect(response.batchItemFailures).toEqual([]);
          const delivered = sink.got.map((r) => r.sequenceNumber);
          const dead = dlq.entries.map((e) => e.sequenceNumber);
          expect(delivered).toEqual(specs.flatMap((s, i) => (s.valid ? [seq(i)] : [])));
          expect(dead).toEqual(specs.flatMap((s, i) => (s.valid ? [] : [seq(i)])));
          for (const r of sink.got)
            expect(r.newImage).toMatchObject({ status: 'paid', total: 12.5, lines: [] });
        },
      ),
      { numRuns: 50 },
    );
  });
});
