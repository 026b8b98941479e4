/**
 * Typed, validated images: tidewater routes with a zod and with a valibot item schema against
 * Powertools' parser (`parse(event, DynamoDBStreamEnvelope, schema)`, zod), on the same seeded
 * events (bench/lib/events.ts: ~1 KB items of every attribute type, one in five with a 38-digit
 * number; NEW_AND_OLD_IMAGES). Each side validates every image its records carry with an
 * equivalent schema — the same fields and checks, each written for what its unmarshaller gives
 * (tidewater: numbers exact — number, bigint or NumberValue — and binaries as bytes; Powertools:
 * number or bigint, binaries left base64) — and hands the output on. tidewater's row without a
 * schema (images read, nothing checked) shows what validation itself costs.
 *
 * One process, the variants interleaved in rotating order per round, so each sees the same
 * machine state; the median over rounds. tidewater runs from `dist/` like the other suites.
 */
import { parse } from '@aws-lambda-powertools/parser';
import { DynamoDBStreamEnvelope } from '@aws-lambda-powertools/parser/envelopes';
import * as v from 'valibot';
import { z } from 'zod';
import { createJsonLogger } from '../../src/logging/json-logger.js';
import { createStreamHandler, type ItemSchema, route, validated } from '../../src/pipeline/index.js';
import { NumberValue } from '../../src/records/index.js';
import type { ClassifiedRecord, LambdaStreamEvent } from '../../src/records/types.js';
import type { Sink } from '../../src/sinks/types.js';
import { generateEvent } from '../lib/events.js';
import { fixed, goal, int, ratio, table, whyMissed } from '../lib/markdown.js';
import { median, quartiles, rotate } from '../lib/stats.js';

const SEED = 20_261_124;
const BATCH = 100;
/** Issue 18: tidewater with a schema at ≥ 2× Powertools' parser with an equivalent one. */
const TARGET = 2;
const STATUSES = ['new', 'paid', 'shipped', 'delivered', 'returned'] as const;

/**
 * Two schemas, each written in zod (for tidewater's and for Powertools' unmarshaller) and in
 * valibot (tidewater's): `fields`, the fields a route reads (key, status, price, quantity, the
 * address's city and zip), unknown keys stripped, as a typical route schema is; `full`, every
 * attribute of the item, sets, lists and nested maps included.
 */
type Workload = 'fields' | 'full';
const WORKLOADS: readonly Workload[] = ['fields', 'full'];

function zodFields(num: z.ZodType) {
  return z.object({
    pk: z.string().startsWith('customer#'),
    sk: num,
    status: z.enum(STATUSES),
    price: num,
    quantity: num,
    address: z.object({ city: z.string(), zip: z.string().length(5) }),
  });
}

function valibotFields() {
  const num = v.union([v.number(), v.bigint(), v.instance(NumberValue)]);
  return v.object({
    pk: v.pipe(v.string(), v.startsWith('customer#')),
    sk: num,
    status: v.picklist(STATUSES),
    price: num,
    quantity: num,
    address: v.object({ city: v.string(), zip: v.pipe(v.string(), v.length(5)) }),
  });
}

/** The item of bench/lib/events.ts, in zod, for a given number and binary representation. */
function zodItem(num: z.ZodType, bin: z.ZodType) {
  return z.object({
    pk: z.string().startsWith('customer#'),
    sk: num,
    version: num,
    title: z.string().min(1),
    description: z.string(),
    status: z.enum(STATUSES),
    price: num,
    quantity: num,
    ratio: num,
    active: z.boolean(),
    deletedAt: z.null(),
    avatar: bin,
    tags: z.set(z.string()),
    scores: z.set(num),
    blobs: z.set(bin),
    history: z.array(z.union([z.string(), num, z.boolean(), z.object({ at: num, by: z.string() })])),
    address: z.object({
      street: z.string(),
      city: z.string(),
      zip: z.string().length(5),
      geo: z.object({ lat: num, lon: num }),
      lines: z.array(z.string().nullable()),
    }),
    expiresAt: num,
    ledger: num.optional(),
  });
}

function valibotItem() {
  const num = v.union([v.number(), v.bigint(), v.instance(NumberValue)]);
  const bin = v.instance(Uint8Array);
  return v.object({
    pk: v.pipe(v.string(), v.startsWith('customer#')),
    sk: num,
    version: num,
    title: v.pipe(v.string(), v.minLength(1)),
    description: v.string(),
    status: v.picklist(STATUSES),
    price: num,
    quantity: num,
    ratio: num,
    active: v.boolean(),
    deletedAt: v.null(),
    avatar: bin,
    tags: v.set(v.string()),
    scores: v.set(num),
    blobs: v.set(bin),
    history: v.array(v.union([v.string(), num, v.boolean(), v.object({ at: num, by: v.string() })])),
    address: v.object({
      street: v.string(),
      city: v.string(),
      zip: v.pipe(v.string(), v.length(5)),
      geo: v.object({ lat: num, lon: num }),
      lines: v.array(v.nullable(v.string())),
    }),
    expiresAt: num,
    ledger: v.optional(num),
  });
}

/** What every variant hands on per record: its (validated) images, counted so none is dropped unseen. */
interface Collector {
  images: number;
  checksum: number;
}

type Variant = { name: string; note: string; run: (event: LambdaStreamEvent) => Promise<void> };

const DISCARD = { write: (): void => undefined };

function collectingSink(collector: Collector): Sink {
  return {
    name: 'items',
    write(records: readonly ClassifiedRecord[]) {
      for (const r of records) {
        const images = [r.newImage, r.oldImage];
        for (const image of images) {
          if (image === undefined) continue;
          collector.images++;
          collector.checksum += (image.pk as string).length;
        }
      }
      return undefined;
    },
  };
}

function tidewater(collector: Collector, item: ItemSchema | undefined): Variant['run'] {
  const handler = createStreamHandler({
    routes: [
      route({
        when: ['insert', 'modify', 'user-delete', 'ttl-delete'],
        item: item === undefined ? undefined : validated(item),
        to: collectingSink(collector),
      }),
    ],
    logger: createJsonLogger({ destination: DISCARD }),
    metrics: { writer: DISCARD },
  });
  return async (event) => {
    const response = await handler(event as never, {} as never);
    if (response.batchItemFailures.length !== 0) throw new Error('tidewater: a record failed its schema');
  };
}

function powertools(collector: Collector, workload: Workload): Variant['run'] {
  const num = z.union([z.number(), z.bigint()]);
  const schema = workload === 'full' ? zodItem(num, z.string()) : zodFields(num);
  return async (event) => {
    // Throws a ParseError for the whole batch when any image fails: every image here is valid.
    const records = parse(event, DynamoDBStreamEnvelope, schema);
    for (const r of records) {
      for (const image of [r.NewImage, r.OldImage]) {
        if (image === undefined) continue;
        collector.images++;
        collector.checksum += image.pk.length;
      }
    }
  };
}

async function measure(
  workload: Workload,
  events: readonly LambdaStreamEvent[],
  rounds: number,
  log: (m: string) => void,
): Promise<{ markdown: string; data: unknown; missed: boolean }> {
  const records = events.reduce((n, e) => n + e.Records.length, 0);
  const collectors = new Map<string, Collector>();
  const collector = (name: string): Collector => {
    const c = { images: 0, checksum: 0 };
    collectors.set(name, c);
    return c;
  };
  const num = z.union([z.number(), z.bigint(), z.instanceof(NumberValue)]);
  const variants: Variant[] = [
    {
      name: 'tidewater + zod',
      note: '`route({ when: [all kinds], item: validated(zodSchema), to })` through createStreamHandler (logs and EMF produced, discarded)',
      run: tidewater(
        collector('tidewater + zod'),
        workload === 'full' ? zodItem(num, z.instanceof(Uint8Array)) : zodFields(num),
      ),
    },
    {
      name: 'tidewater + valibot',
      note: 'the same route with the valibot schema',
      run: tidewater(collector('tidewater + valibot'), workload === 'full' ? valibotItem() : valibotFields()),
    },
    {
      name: 'Powertools parser (zod)',
      note: "`parse(event, DynamoDBStreamEnvelope, zodSchema)` (@aws-lambda-powertools/parser): its DynamoDB stream schema, util-dynamodb's unmarshall, then the item schema on NewImage and OldImage",
      run: powertools(collector('Powertools parser (zod)'), workload),
    },
    {
      name: 'tidewater, no schema',
      note: 'the same route without `item`: images unmarshalled and read, nothing checked (the cost of validation is the difference)',
      run: tidewater(collector('tidewater, no schema'), undefined),
    },
  ];
  // Warm-up: every variant once over every batch, then the counters restart.
  for (const variant of variants) for (const event of events) await variant.run(event);
  for (const c of collectors.values()) {
    c.images = 0;
    c.checksum = 0;
  }
  const samples = new Map<string, number[]>(variants.map((x) => [x.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const variant of rotate(variants, r)) {
      globalThis.gc?.();
      const started = process.hrtime.bigint();
      for (const event of events) await variant.run(event);
      samples.get(variant.name)!.push(Number(process.hrtime.bigint() - started) / records);
    }
  }
  const expected = collectors.get('tidewater, no schema')!;
  for (const [name, c] of collectors) {
    if (c.images !== expected.images || c.checksum !== expected.checksum)
      throw new Error(
        `${workload}: ${name} handed on ${c.images} images (checksum ${c.checksum}), expected ${expected.images}`,
      );
  }
  const nsPerRecord = new Map([...samples].map(([name, values]) => [name, median(values)]));
  const pt = nsPerRecord.get('Powertools parser (zod)')!;
  const zodRatio = pt / nsPerRecord.get('tidewater + zod')!;
  const valibotRatio = pt / nsPerRecord.get('tidewater + valibot')!;
  const rows = variants.map((variant) => {
    const values = samples.get(variant.name)!;
    const { q1, q3 } = quartiles(values);
    const it = nsPerRecord.get(variant.name)!;
    return [
      variant.name,
      fixed(it / 1000, 2),
      `${fixed(q1 / 1000, 2)}–${fixed(q3 / 1000, 2)}`,
      int(1e9 / it),
      ratio(pt / it),
    ];
  });
  log(
    `${workload}: tidewater + zod ${ratio(zodRatio)}, + valibot ${ratio(valibotRatio)} the Powertools parser's rate`,
  );
  const title =
    workload === 'fields'
      ? '### Schema of the fields a route reads (6 fields, nested city/zip; unknown keys stripped)'
      : '### Schema of the whole item (every attribute: sets, lists, nested maps)';
  const markdown = [
    title,
    '',
    table(['variant', 'µs / record (median)', 'interquartile', 'records / s', 'vs Powertools parser'], rows, [
      'left',
      'right',
      'right',
      'right',
      'right',
    ]),
    '',
    goal(`${workload}: tidewater + zod vs the Powertools parser (zod)`, zodRatio, TARGET, true, ratio),
    goal(
      `${workload}: tidewater + valibot vs the Powertools parser (zod)`,
      valibotRatio,
      TARGET,
      true,
      ratio,
    ),
    '',
    ...(workload === 'fields' ? variants.map((variant) => `- **${variant.name}**: ${variant.note}.`) : []),
    '',
  ].join('\n');
  return {
    markdown,
    data: { nsPerRecord: Object.fromEntries(nsPerRecord), zodRatio, valibotRatio, images: expected.images },
    missed: zodRatio < TARGET || valibotRatio < TARGET,
  };
}

export default {
  name: 'validation',
  title: "Typed, validated images: tidewater with zod / valibot item schemas vs Powertools' parser",
  async run({ quick, log }: { quick: boolean; log: (m: string) => void }) {
    const batches = quick ? 10 : 40;
    const rounds = quick ? 8 : 20;
    const events = Array.from({ length: batches }, (_, b) => generateEvent({ seed: SEED + b, count: BATCH }));
    const records = batches * BATCH;
    log(`${records} records (${batches} batches of ${BATCH}), ${rounds} rounds per variant and schema`);
    const sections: string[] = [];
    const data: Record<string, unknown> = { records, rounds };
    const missed: string[] = [];
    for (const workload of WORKLOADS) {
      const result = await measure(workload, events, rounds, log);
      data[workload] = result.data;
      sections.push(result.markdown);
      if (result.missed) missed.push(workload);
    }
    const markdown = [
      `${int(records)} seeded records (seed ${SEED}; ${batches} batches of ${BATCH}; 45% insert, 45% modify, ` +
        '5% user delete, 5% TTL delete; NEW_AND_OLD_IMAGES, ~1 KB items of every attribute type, 20% with a ' +
        `38-digit number), every image valid; each variant over every batch per round, ${rounds} rounds ` +
        'interleaved in rotating order after a warm-up pass, median of the rounds (wall time, one process, ' +
        "a full GC before each variant's pass). Every variant validates every image its records carry with an " +
        'equivalent schema (the same fields and checks, written for what its unmarshaller gives) and hands the ' +
        'output on; the handed-on images are counted and compared. tidewater runs from `dist/`.',
      '',
      ...sections,
      ...(missed.length > 0 ? [whyMissed('validation'), ''] : []),
      'The Powertools parser fails the whole batch when one image is invalid (a ParseError); tidewater ' +
        'dead-letters that record (`invalid-image`, with the issues) and delivers the rest. The schemas ' +
        "differ where the unmarshallers do: Powertools' leaves binaries base64 and rounds decimals past 15 " +
        "digits (`-0.607100` arrives as -0.6071), tidewater's keeps both exact.",
    ].join('\n');
    return { markdown, data };
  },
};
