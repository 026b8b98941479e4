// Not the logging index: that also loads pino, which the default logger exists to avoid.

import { RETRY_POLICIES, type RetryPolicy } from '../core/backoff.js';
import { defineOptions, describe } from '../core/options.js';
import type { EntityDiscriminator } from '../filters/entity.js';
import { createJsonLogger } from '../logging/json-logger.js';
import {
  fromPowertoolsLogger,
  isPowertoolsLogger,
  type PowertoolsLoggerLike,
} from '../logging/powertools-logger.js';
import { TTL_HEURISTIC_OPTION } from '../records/classify.js';
import { NUMBERS_OPTION } from '../records/numbers.js';
import { createStreamRecordParser, type ParseOptions, type RecordParser } from '../records/parse.js';
import type { ClassifiedRecord, Item, RecordKind, RecordOfKind } from '../records/types.js';
import type { DeadLetterSink, Sink, SinkContext, SinkLogger, SinkResult } from '../sinks/types.js';
import { type KinesisSource, SOURCE_OPTION, type StreamSource } from './kinesis-source.js';
import {
  type CompiledMetrics,
  compileMetrics,
  isMetricsTarget,
  type MetricsConfig,
  type MetricsTarget,
} from './metrics.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import { isTracerLike, type TracerLike, tracedSink } from './tracing.js';

/** A logger the pipeline can make a per-invocation child of (a pino Logger is one). */
export interface PipelineLogger extends SinkLogger {
  child(bindings: Record<string, unknown>): PipelineLogger;
}

export type RecordPredicate = (record: ClassifiedRecord) => boolean;

/**
 * A kind, several kinds, or a predicate. A Lambda filter pattern is a predicate made by
 * `matching(pattern)` (filters), so only the handlers that use one load the filter compiler.
 */
export type RouteCondition = RecordKind | readonly RecordKind[] | RecordPredicate;

/**
 * Which images of a record an item schema must accept for the record to be delivered:
 * - `'new'` (default): the item as the change left it — NewImage of an insert or a modify, the
 *   OldImage of a delete (its only image). A modify's OldImage is validated too, and given to the
 *   sinks as the schema's output when it fits; when it does not (written before the schema was
 *   tightened) the record is still delivered, with `oldImage: undefined` — `raw` keeps it. What a
 *   team upgrading a schema expects: a change of an old item is not lost because its old state
 *   predates the schema.
 * - `'all'`: every image must fit; a modify whose OldImage does not is dead-lettered whole
 *   (`invalid-image`, issues under `OldImage`).
 */
export type ImagesChecked = 'new' | 'all';

/**
 * An item schema: any Standard Schema (zod, valibot, arktype…) whose output is an item. Its output
 * is what the route's sinks (or the kind handlers) receive as `newImage` / `oldImage`.
 */
export type ItemSchema<T extends object = Item> = StandardSchemaV1<unknown, T>;

export interface RouteConfig {
  /** Used in logs; default `route-<n>`. */
  name?: string;
  when: RouteCondition;
  /** Only this entity's records (`entity({ attribute: 'sk', prefix: 'ORDER#' })`), of the kinds in `when`. */
  // biome-ignore lint/suspicious/noExplicitAny: any item type
  entity?: EntityDiscriminator<any>;
  /**
   * Validates the images the route's records carry (NewImage of inserts and modifies, OldImage of
   * modifies and deletes, where the stream view has them), once per record, before any sink runs;
   * the sinks receive the schema's output. A record that fails is dead-lettered (`invalid-image`),
   * never retried, never given to the route's sinks. Without it images stay lazy and unchecked.
   */
  // biome-ignore lint/suspicious/noExplicitAny: any item type
  item?: ItemSchema<any>;
  /** Which images `item` must accept: see ImagesChecked. Default `'new'`. */
  images?: ImagesChecked;
  // Sink methods are bivariant, so a Sink<TtlDeleteRecord> fits here; `route()` checks the pairing.
  // biome-ignore lint/suspicious/noExplicitAny: any record subtype
  to: Sink<any> | readonly Sink<any>[];
}

/**
 * A sink as route() checks it against the records the route delivers: `write` as a function
 * property, so its parameter is compared strictly (a method's parameters are bivariant, which
 * would let a Sink<InsertRecord<Order>> take unchecked InsertRecord<Item>s).
 */
export interface SinkTaking<R> {
  readonly name: string;
  readonly write: (
    records: readonly R[],
    context: SinkContext,
  ) => Promise<SinkResult | undefined> | SinkResult | undefined;
}

type RouteTargets<R> = SinkTaking<R> | readonly SinkTaking<R>[];

/**
 * A route whose sinks are typed by what it delivers: the kinds it takes and the item type —
 * `route({ when: 'insert', item: orderSchema, to: sink })` gives the sink InsertRecord<Order>
 * (the schema's output), `entity<Order>(…)` types without checking, and without either the images
 * are plain Items. A sink typed for a narrower item than the route delivers is refused.
 */
export function route<const K extends RecordKind, E extends object = Item, T extends object = E>(config: {
  name?: string;
  when: K | readonly K[];
  entity?: EntityDiscriminator<E>;
  item?: ItemSchema<T>;
  images?: ImagesChecked;
  // `[K] extends [never]`: while `when` is still being inferred, K reads as never; without this
  // a sink constructed inline (`to: new MemorySink()`) would infer its records from that never.
  to: RouteTargets<[K] extends [never] ? ClassifiedRecord<NoInfer<T>> : RecordOfKind<K, NoInfer<T>>>;
}): RouteConfig;
/** A predicate route (`when: matching(pattern)`), its sinks typed by the item type alone. */
export function route<E extends object = Item, T extends object = E>(config: {
  name?: string;
  when: RecordPredicate;
  entity?: EntityDiscriminator<E>;
  item?: ItemSchema<T>;
  images?: ImagesChecked;
  to: RouteTargets<ClassifiedRecord<NoInfer<T>>>;
}): RouteConfig;
export function route(config: RouteConfig): RouteConfig {
  return config;
}

export interface HandlerContext extends SinkContext {
  readonly signal: AbortSignal;
  readonly logger: PipelineLogger;
}

/**
 * Per-kind functions; each receives the record narrowed to its kind. A throw fails the record (then
 * retries). `item`: a schema the images each handler's records carry are validated with first (as
 * a route's `item`); the handlers then receive its output, and a record that fails is
 * dead-lettered (`invalid-image`) without its handler running.
 */
export type KindHandlers<T extends object = Item> = {
  item?: ItemSchema<T>;
  /** Which images `item` must accept (see ImagesChecked). Default `'new'`. */
  images?: ImagesChecked;
} & {
  [K in RecordKind]?: (record: RecordOfKind<K, T>, context: HandlerContext) => unknown;
};

export type OrderingConfig = 'ordered' | { mode: 'ordered' } | { mode: 'per-key'; concurrency: number };

export interface RetryConfig {
  /** Delivery attempts per record in this invocation, the first included. Default 3. */
  attempts?: number;
  /** Backoff before the first retry; doubles each retry, randomized ×1..2. Default 100. */
  baseDelayMs?: number;
  /** Cap on one backoff. Default 2000. */
  maxDelayMs?: number;
  /** False for errors that retrying cannot fix (the record is dead-lettered at once). Default: all retryable. */
  retryable?: (error: unknown) => boolean;
}

export type { MetricsConfig, MetricsTarget, MetricsWriter } from './metrics.js';

export type UnroutedPolicy = 'count' | 'dead-letter' | 'fail';

/** T: the item type the kind handlers receive (inferred from `handlers.item`, or given: unchecked). */
export interface PipelineConfig<T extends object = Item> {
  routes?: readonly RouteConfig[];
  handlers?: KindHandlers<T>;
  ordering?: OrderingConfig;
  deadLetter?: DeadLetterSink;
  retry?: RetryConfig;
  /** A failing record older than this (by ApproximateCreationDateTime) is dead-lettered without more retries. */
  maxRecordAgeSeconds?: number;
  /** Stop starting work when less than this is left of the invocation. Default 1000. */
  deadlineMarginMs?: number;
  /** The table's TTL attribute: INSERT/MODIFY records whose TTL never expires are logged and counted. */
  ttlAttribute?: string;
  /**
   * Include item images in the TTL warning, and let the default logger and an adapted Powertools
   * Logger write images instead of `[Redacted]`. Default false.
   */
  logImages?: boolean;
  /**
   * A pino-style logger (`child`, `warn(fields, message)`, …) or a Powertools Logger, adapted once
   * here to that shape (fields made JSON-safe, images redacted unless `logImages`). Default
   * createJsonLogger().
   */
  logger?: PipelineLogger | PowertoolsLoggerLike;
  /**
   * tidewater's EMF line settings, a Powertools Metrics instance (as `{ target }`), or false.
   * Left out: one EMF line per invocation in Lambda (where `AWS_LAMBDA_FUNCTION_NAME` is set),
   * none elsewhere (tests, the local emulator, scripts); `TIDEWATER_METRICS=on` or `off` decides
   * instead. Given: always as given.
   */
  metrics?: MetricsConfig | MetricsTarget | false;
  /**
   * A Powertools Tracer (or anything with its getSegment()): each sink write gets its own
   * subsegment, annotated with the sink, its record count and its failures. Default: none, and
   * then sinks are called as they are.
   */
  tracer?: TracerLike;
  /** Records no route or handler takes. Default `'count'`. */
  onUnrouted?: UnroutedPolicy;
  /**
   * Record parsing. Default: each record's envelope is checked at parse time, its keys and images
   * only when first read — a route that never reads an image (an archive of the raw DynamoDB JSON)
   * never pays for them. A record whose keys or image prove malformed when a predicate, handler or
   * sink reads them is dead-lettered (`malformed`) and the sink's other records are written.
   * `validate: true` checks keys and images up front instead; `eager: true` unmarshals them.
   */
  parse?: Pick<ParseOptions, 'numbers' | 'ttlHeuristic' | 'eager' | 'validate'>;
  /**
   * The event source the function is triggered by: a DynamoDB stream (default), or a Kinesis data
   * stream fed by the table's Kinesis streaming destination — `kinesisSource()`, which links the
   * Kinesis stages into the handler (a DynamoDB Streams handler's bundle carries none of them).
   * A batch from another source fails whole with EventSourceMismatchError: a trigger wired to the
   * wrong stream fails loudly instead of being processed with the other source's guarantees
   * (Kinesis may duplicate and reorder an item's changes; the pipeline orders and de-duplicates
   * those batches, see docs/kinesis.md).
   */
  source?: StreamSource;
  /** Epoch milliseconds; for tests. Default Date.now. */
  clock?: () => number;
}

export const KINDS: readonly RecordKind[] = ['insert', 'modify', 'user-delete', 'ttl-delete'];
/** Bit per kind, so a kind route matches with one AND. */
export const KIND_BIT: Readonly<Record<RecordKind, number>> = {
  insert: 1,
  modify: 2,
  'user-delete': 4,
  'ttl-delete': 8,
};
/** Routing uses one 32-bit mask per record: a bit per sink, and HANDLER_BIT. */
const MAX_SINKS = 31;
/** In a record's routing mask: its kind handler has yet to run. Above every sink's bit. */
export const HANDLER_BIT = 1 << MAX_SINKS;
/** Every sink's bit. */
export const SINK_BITS = ~HANDLER_BIT;

/** One route, ready for the hot path: either a kind mask or a test function, and the sinks' bits. */
export interface CompiledRoute {
  readonly name: string;
  readonly kindMask: number;
  readonly test: ((record: ClassifiedRecord) => boolean) | undefined;
  readonly sinkMask: number;
}

export interface CompiledConfig {
  readonly routes: readonly CompiledRoute[];
  /** The distinct item schemas of routes and handlers; empty when none is given (no validation stage). */
  readonly schemas: readonly CompiledSchema[];
  /** Per sink, the index into `schemas` of the schema its records are validated with, or -1. */
  readonly sinkSchemas: readonly number[];
  /** The index into `schemas` of the kind handlers' schema, or -1. */
  readonly handlerSchema: number;
  /**
   * Per kind, the routing mask its kind routes and handler give every record of that kind: the
   * per-record path only evaluates `predicateRoutes` on top (kind routes have no side effects, so
   * folding them here changes nothing a predicate could see).
   */
  readonly kindMasks: Readonly<Record<RecordKind, number>>;
  /** The routes with a predicate, in config order. */
  readonly predicateRoutes: readonly CompiledRoute[];
  readonly sinks: readonly Sink[];
  /**
   * The bits of the sinks that take only checked images (Sink.checkedImages): a record routed to
   * one has its keys and images checked at routing. 0 when parsing already checks them (`parse.validate` or `eager`).
   */
  readonly checkedSinks: number;
  /** Indexed by KIND_BIT position order of KINDS. */
  readonly handlers: readonly (
    | ((record: ClassifiedRecord, context: HandlerContext) => unknown)
    | undefined
  )[];
  readonly handledKinds: number;
  readonly perKey: boolean;
  readonly concurrency: number;
  readonly deadLetter: DeadLetterSink | undefined;
  /** RETRY_POLICIES.sinkWrite with the `retry` option's values: core/backoff's schedule. */
  readonly retry: RetryPolicy;
  readonly retryable: ((error: unknown) => boolean) | undefined;
  readonly maxRecordAgeMs: number;
  readonly deadlineMarginMs: number;
  readonly ttlAttribute: string | undefined;
  readonly logImages: boolean;
  readonly logger: PipelineLogger;
  readonly metrics: CompiledMetrics | undefined;
  readonly onUnrouted: UnroutedPolicy;
  readonly parse: RecordParser;
  /** The `parse` options the parser was made with: a backfill makes its own parser from them. */
  readonly parseOptions: PipelineConfig['parse'];
  /** The Kinesis stage (its parser made with the same parse options); undefined for a DynamoDB stream. */
  readonly kinesis: { readonly source: KinesisSource; readonly parse: RecordParser } | undefined;
  readonly clock: () => number;
}

/** One item schema, ready for the validation stage. */
export interface CompiledSchema {
  readonly schema: ItemSchema;
  /** `~standard`, read once: a library may build it in a getter. */
  readonly props: StandardSchemaV1.Props<unknown, Item>;
  /** `~standard.vendor`, for errors: zod, valibot… */
  readonly vendor: string;
  /** The routing-mask bits (sinks, HANDLER_BIT) whose records this schema validates. */
  readonly mask: number;
  /** What a dead-letter entry names as the sink: the sinks' names, `handlers` for the kind handlers. */
  readonly label: string;
  /** 'new': a modify's OldImage that fails is left out (undefined), not a reason to give up. */
  readonly images: ImagesChecked;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isPlainObjectOrInstance(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}

const UNROUTED = ['count', 'dead-letter', 'fail'] as const;
const AN_OBJECT = { kind: 'custom', expected: 'an object', check: isPlainObject } as const;

// The configuration's declared options (core/options), each nested object with its own reader
// and its place in the message: `pipeline: option 'retry.attempts' must be …`.
const readConfig = /* @__PURE__ */ defineOptions<PipelineConfig>()('pipeline', {
  routes: { kind: 'custom', expected: 'an array of routes', check: Array.isArray },
  handlers: AN_OBJECT,
  ordering: {
    kind: 'custom',
    expected: "'ordered' or { mode: 'per-key', concurrency }",
    check: (v) => v === 'ordered' || isPlainObject(v),
  },
  deadLetter: { kind: 'object', methods: ['send'], expected: 'a dead-letter sink (an object with send())' },
  retry: AN_OBJECT,
  maxRecordAgeSeconds: { kind: 'number', min: 0 },
  deadlineMarginMs: { kind: 'number', min: 0, default: 1000 },
  ttlAttribute: { kind: 'nonEmptyString' },
  logImages: { kind: 'boolean', default: false },
  logger: {
    kind: 'custom',
    expected:
      'a pino-compatible logger (child, debug, info, warn, error) or a Powertools Logger (createChild, debug, info, warn, error)',
    check: (v) =>
      isPowertoolsLogger(v) ||
      (isPlainObjectOrInstance(v) &&
        typeof (v as PipelineLogger).child === 'function' &&
        typeof (v as PipelineLogger).warn === 'function'),
  },
  metrics: {
    kind: 'custom',
    expected: 'an object, a Powertools Metrics instance or false',
    check: (v) => v === false || isPlainObject(v) || isMetricsTarget(v),
  },
  tracer: { kind: 'custom', expected: 'a Powertools Tracer (with getSegment())', check: isTracerLike },
  onUnrouted: { kind: 'enum', values: UNROUTED, default: 'count' },
  parse: AN_OBJECT,
  source: SOURCE_OPTION,
  clock: { kind: 'function', default: Date.now },
});

/** A Standard Schema v1: what `item` takes. Checked at configuration time, so a zod 3.23 schema (no `~standard`) fails there. */
export function isItemSchema(value: unknown): value is ItemSchema {
  const props = (value as { '~standard'?: unknown } | null | undefined)?.['~standard'];
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    isPlainObjectOrInstance(props) &&
    (props as { version?: unknown }).version === 1 &&
    typeof (props as { validate?: unknown }).validate === 'function'
  );
}

const ITEM_SCHEMA = {
  kind: 'custom',
  expected:
    'a Standard Schema v1 (a zod ≥ 3.24, valibot ≥ 1 or arktype schema: an object with ~standard.validate)',
  check: isItemSchema,
} as const;

const IMAGES_CHECKED = { kind: 'enum', values: ['new', 'all'] } as const;

const readRoute = /* @__PURE__ */ defineOptions<RouteConfig>()('pipeline', {
  name: { kind: 'nonEmptyString' },
  when: {
    kind: 'custom',
    expected: 'a kind, a list of kinds or a predicate (matching(pattern) for a filter pattern)',
    check: (v) => v !== undefined,
    required: true,
  },
  entity: {
    kind: 'custom',
    expected: "an entity discriminator (entity({ attribute, equals | prefix }) from 'tidewater')",
    check: (v) =>
      isPlainObjectOrInstance(v) &&
      typeof (v as EntityDiscriminator).test === 'function' &&
      typeof (v as EntityDiscriminator).description === 'string',
  },
  item: ITEM_SCHEMA,
  images: IMAGES_CHECKED,
  to: {
    kind: 'custom',
    expected: 'a sink or a list of sinks (objects with write())',
    check: (v) => (Array.isArray(v) ? v.every(isSink) : isSink(v)),
    required: true,
  },
});

const readOrdering = /* @__PURE__ */ defineOptions<{ mode: 'ordered' | 'per-key'; concurrency?: number }>()(
  'pipeline',
  {
    mode: { kind: 'enum', values: ['ordered', 'per-key'], required: true },
    concurrency: { kind: 'integer', min: 1 },
  },
);

const HANDLER = { kind: 'function' } as const;
const readHandlers = /* @__PURE__ */ defineOptions<KindHandlers>()('pipeline', {
  item: ITEM_SCHEMA,
  images: IMAGES_CHECKED,
  insert: HANDLER,
  modify: HANDLER,
  'user-delete': HANDLER,
  'ttl-delete': HANDLER,
});

const DEFAULT_RETRY = RETRY_POLICIES.sinkWrite;
const readRetry = /* @__PURE__ */ defineOptions<RetryConfig>()('pipeline', {
  attempts: { kind: 'integer', min: 1, default: DEFAULT_RETRY.attempts },
  baseDelayMs: { kind: 'number', min: 0, default: DEFAULT_RETRY.baseDelayMs },
  maxDelayMs: { kind: 'number', min: 0, default: DEFAULT_RETRY.maxDelayMs },
  retryable: { kind: 'function' },
});

const readParse = /* @__PURE__ */ defineOptions<NonNullable<PipelineConfig['parse']>>()('pipeline', {
  numbers: NUMBERS_OPTION,
  ttlHeuristic: TTL_HEURISTIC_OPTION,
  eager: { kind: 'boolean' },
  validate: { kind: 'boolean' },
});

function fail(detail: string): never {
  throw readConfig.fail(detail);
}

function isKind(value: unknown): value is RecordKind {
  return typeof value === 'string' && (KINDS as readonly string[]).includes(value);
}

function isSink(value: unknown): value is Sink {
  return isPlainObjectOrInstance(value) && typeof (value as Sink).write === 'function';
}

function sinkName(sink: Sink): string {
  return typeof sink.name === 'string' && sink.name !== '' ? sink.name : 'sink';
}

function compileWhen(when: unknown, where: string): { kindMask: number; test: RecordPredicate | undefined } {
  if (isKind(when)) return { kindMask: KIND_BIT[when], test: undefined };
  if (typeof when === 'function') return { kindMask: 0, test: when as RecordPredicate };
  if (Array.isArray(when)) {
    if (when.length === 0) fail(`${where}.when is an empty list of kinds`);
    let kindMask = 0;
    for (const k of when) {
      if (!isKind(k)) fail(`${where}.when: unknown kind ${describe(k)} (known: ${KINDS.join(', ')})`);
      kindMask |= KIND_BIT[k];
    }
    return { kindMask, test: undefined };
  }
  if (isPlainObject(when)) {
    // The pipeline no longer compiles patterns itself, so that a handler without pattern routes
    // does not load (or bundle) the filter compiler.
    fail(
      `${where}.when: a filter pattern object is not a route condition; write when: matching(pattern) ` +
        "(import { matching } from 'tidewater'), which compiles the pattern once",
    );
  }
  if (typeof when === 'string')
    fail(`${where}.when: unknown kind ${JSON.stringify(when)} (known: ${KINDS.join(', ')})`);
  fail(
    `${where}.when must be a kind, a list of kinds or a predicate (matching(pattern) for a filter pattern)`,
  );
}

/**
 * A route with an entity discriminator is a predicate route: its kinds (or predicate) AND the
 * discriminator, evaluated per record, since the kind masks are folded per kind alone.
 */
function withEntity(
  when: { kindMask: number; test: RecordPredicate | undefined },
  entity: EntityDiscriminator | undefined,
): { kindMask: number; test: RecordPredicate | undefined } {
  if (entity === undefined) return when;
  const isEntity = entity.test;
  const { kindMask, test } = when;
  if (test !== undefined) return { kindMask: 0, test: (record) => test(record) && isEntity(record) };
  return { kindMask: 0, test: (record) => (kindMask & KIND_BIT[record.kind]) !== 0 && isEntity(record) };
}

/** An item schema and which images it must accept. */
interface SchemaUse {
  readonly schema: ItemSchema;
  readonly images: ImagesChecked;
}

function schemaUse(schema: ItemSchema | undefined, images: ImagesChecked | undefined): SchemaUse | null {
  if (schema === undefined) {
    if (images !== undefined) fail("'images' says which images 'item' checks: give 'item' with it");
    return null;
  }
  return { schema, images: images ?? 'new' };
}

const sameUse = (a: SchemaUse | null, b: SchemaUse | null): boolean =>
  a === b || (a !== null && b !== null && a.schema === b.schema && a.images === b.images);

interface CompiledRoutes {
  routes: CompiledRoute[];
  sinks: Sink[];
  /** Per sink, the item schema of the routes that reach it (null: none). */
  sinkSchemas: (SchemaUse | null)[];
}

function compileRoutes(routes: readonly unknown[] | undefined): CompiledRoutes {
  if (routes === undefined) return { routes: [], sinks: [], sinkSchemas: [] };
  const sinks: Sink[] = [];
  const sinkSchemas: (SchemaUse | null)[] = [];
  const compiled: CompiledRoute[] = [];
  routes.forEach((r: unknown, n) => {
    const where = `routes[${n}]`;
    const route = readRoute(r, 'pipeline', `${where}.`);
    const { kindMask, test } = withEntity(compileWhen(route.when, where), route.entity);
    const targets = Array.isArray(route.to) ? route.to : [route.to];
    if (targets.length === 0) fail(`${where}.to is empty`);
    const schema = schemaUse(route.item, route.images);
    let sinkMask = 0;
    for (const sink of targets as Sink[]) {
      let index = sinks.indexOf(sink);
      if (index === -1) {
        if (sinks.length === MAX_SINKS) fail(`at most ${MAX_SINKS} distinct sinks are supported`);
        index = sinks.push(sink) - 1;
        sinkSchemas[index] = schema;
      } else if (!sameUse(sinkSchemas[index]!, schema)) {
        // A sink gets one batch per invocation; records validated by one schema and records
        // validated by another (or not at all) would be indistinguishable in it.
        fail(
          `${where}: sink ${sinkName(sink)} is reached by routes with different item schemas ` +
            "(or with and without one, or other 'images'); a sink takes one: give its routes the same schema (a union for several entities)",
        );
      }
      sinkMask |= 1 << index;
    }
    compiled.push({ name: route.name ?? `route-${n}`, kindMask, test, sinkMask });
  });
  return { routes: compiled, sinks, sinkSchemas };
}

/** The distinct schemas, each with the mask bits it validates for; -1 where none applies. */
function compileSchemas(
  sinks: readonly Sink[],
  perSink: readonly (SchemaUse | null)[],
  handlerSchema: SchemaUse | null,
): Pick<CompiledConfig, 'schemas' | 'sinkSchemas' | 'handlerSchema'> {
  const found: SchemaUse[] = [];
  const masks: number[] = [];
  const labels: string[][] = [];
  const indexOf = (schema: SchemaUse, bit: number, label: string): number => {
    let j = found.findIndex((use) => sameUse(use, schema));
    if (j === -1) {
      j = found.push(schema) - 1;
      masks[j] = 0;
      labels[j] = [];
    }
    masks[j]! |= bit;
    labels[j]!.push(label);
    return j;
  };
  const sinkSchemas = perSink.map((schema, s) =>
    schema === null ? -1 : indexOf(schema, 1 << s, sinkName(sinks[s]!)),
  );
  const handler = handlerSchema === null ? -1 : indexOf(handlerSchema, HANDLER_BIT, 'handlers');
  const schemas = found.map(({ schema, images }, j) => ({
    schema,
    props: schema['~standard'],
    vendor: String(schema['~standard'].vendor),
    mask: masks[j]!,
    label: labels[j]!.join(', '),
    images,
  }));
  return { schemas, sinkSchemas, handlerSchema: handler };
}

function compileOrdering(ordering: PipelineConfig['ordering']): { perKey: boolean; concurrency: number } {
  if (ordering === undefined || ordering === 'ordered') return { perKey: false, concurrency: 1 };
  const { mode, concurrency } = readOrdering(ordering, 'pipeline', 'ordering.');
  if (mode === 'ordered') {
    if (concurrency !== undefined) fail("ordering: 'concurrency' applies to mode 'per-key' only");
    return { perKey: false, concurrency: 1 };
  }
  if (concurrency === undefined) fail("ordering: mode 'per-key' needs 'concurrency' (a positive integer)");
  return { perKey: true, concurrency };
}

function compileHandlers(handlers: KindHandlers | undefined): {
  list: CompiledConfig['handlers'];
  mask: number;
  schema: SchemaUse | null;
} {
  const list: ((record: ClassifiedRecord, context: HandlerContext) => unknown)[] | undefined[] = [];
  let mask = 0;
  if (handlers === undefined) return { list, mask, schema: null };
  const read = readHandlers(handlers, 'pipeline', 'handlers.');
  KINDS.forEach((kind, i) => {
    const h = read[kind] as ((record: ClassifiedRecord, context: HandlerContext) => unknown) | undefined;
    (list as unknown[])[i] = h;
    if (h !== undefined) mask |= KIND_BIT[kind];
  });
  if (read.item !== undefined && mask === 0)
    fail('handlers.item: give the kind handlers it validates for (insert, modify, …)');
  return { list, mask, schema: schemaUse(read.item, read.images) };
}

function compileRetry(retry: RetryConfig | undefined): Pick<CompiledConfig, 'retry' | 'retryable'> {
  const { attempts, baseDelayMs, maxDelayMs, retryable } = readRetry(retry, 'pipeline', 'retry.');
  if (maxDelayMs < baseDelayMs) fail("'retry.maxDelayMs' must not be below 'retry.baseDelayMs'");
  return { retry: { attempts, baseDelayMs, maxDelayMs }, retryable };
}

/** Recognized once here, so the per-line path never asks which kind of logger it has. */
function compileLogger(logger: PipelineConfig['logger'], logImages: boolean): PipelineLogger {
  if (logger === undefined) return createJsonLogger({ logImages }) as PipelineLogger;
  if (isPowertoolsLogger(logger)) return fromPowertoolsLogger(logger, { logImages });
  return logger as PipelineLogger;
}

/** Validates a pipeline config and precomputes everything the per-record path needs. */
export function compileConfig<T extends object>(config: PipelineConfig<T>): CompiledConfig {
  if (config === undefined) fail('config must be an object, got undefined');
  const c = readConfig(config);
  const compiledRoutes = compileRoutes(c.routes);
  const { routes, sinkSchemas } = compiledRoutes;
  const tracer = c.tracer;
  const sinks =
    tracer === undefined
      ? compiledRoutes.sinks
      : compiledRoutes.sinks.map((sink) => tracedSink(sink, tracer));
  const handlers = compileHandlers(c.handlers as KindHandlers | undefined);
  if (routes.length === 0 && handlers.mask === 0) fail('give at least one route or handler');
  const kindMasks = { insert: 0, modify: 0, 'user-delete': 0, 'ttl-delete': 0 };
  for (const kind of KINDS) {
    const bit = KIND_BIT[kind];
    let mask = (handlers.mask & bit) === 0 ? 0 : HANDLER_BIT;
    for (const r of routes) if (r.test === undefined && (r.kindMask & bit) !== 0) mask |= r.sinkMask;
    kindMasks[kind] = mask;
  }
  const ordering = compileOrdering(c.ordering);
  if (c.onUnrouted === 'dead-letter' && c.deadLetter === undefined) {
    fail("onUnrouted 'dead-letter' needs a 'deadLetter' sink");
  }
  readParse(c.parse, 'pipeline', 'parse.');
  const retry = compileRetry(c.retry);
  return {
    routes,
    ...compileSchemas(sinks, sinkSchemas, handlers.schema),
    kindMasks,
    predicateRoutes: routes.filter((r) => r.test !== undefined),
    sinks,
    checkedSinks: c.parse?.validate || c.parse?.eager ? 0 : checkedSinkBits(sinks),
    handlers: handlers.list,
    handledKinds: handlers.mask,
    perKey: ordering.perKey,
    concurrency: ordering.concurrency,
    deadLetter: c.deadLetter,
    retry: retry.retry,
    retryable: retry.retryable,
    maxRecordAgeMs:
      c.maxRecordAgeSeconds === undefined ? Number.POSITIVE_INFINITY : c.maxRecordAgeSeconds * 1000,
    deadlineMarginMs: c.deadlineMarginMs,
    ttlAttribute: c.ttlAttribute,
    logImages: c.logImages,
    logger: compileLogger(c.logger, c.logImages),
    metrics: compileMetrics(c.metrics, sinks),
    onUnrouted: c.onUnrouted,
    parse: createStreamRecordParser(c.parse),
    parseOptions: c.parse,
    kinesis:
      c.source === 'dynamodb-stream'
        ? undefined
        : { source: c.source, parse: c.source.parser(c.parse ?? {}) },
    clock: c.clock,
  };
}

export { sinkName };

function checkedSinkBits(sinks: readonly Sink[]): number {
  let bits = 0;
  for (let s = 0; s < sinks.length; s++) if (sinks[s]!.checkedImages === true) bits |= 1 << s;
  return bits;
}
