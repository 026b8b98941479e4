// The public config vocabulary: what a user writes (createPipeline, createStreamHandler). What it is
// compiled into lives in plan.ts, the readers and the compiler in compile.ts.
import type { EntityDiscriminator } from '../filters/entity.js';
import type { ParseOptions } from '../records/parse.js';
import type { ClassifiedRecord, Item, RecordKind, RecordOfKind } from '../records/types.js';
import type { DeadLetterSink, Sink, SinkContext, SinkLogger, SinkResult } from '../sinks/types.js';
import type { StreamSource } from './kinesis-source.js';
import type { MetricsConfig, MetricsTarget } from './metrics.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import type { SinkTracer } from './tracing.js';
import type { TTL_HEALTH } from './ttl-health-key.js';
import type { VALIDATED } from './validated-key.js';

/** A logger the pipeline can make a per-invocation child of (a pino Logger is one). */
export interface PipelineLogger extends SinkLogger {
  child(bindings: Record<string, unknown>): PipelineLogger;
}

/** A test of one classified record, as a route's `when`. */
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
 * is what the route's sinks (or the kind handlers) receive as `newImage` / `oldImage`. A route or
 * the kind handlers take it wrapped by validated() (validated.ts).
 */
export type ItemSchema<T extends object = Item> = StandardSchemaV1<unknown, T>;

/** An item schema made by validated(): the schema itself, as a Standard Schema, and its stage. */
export interface ValidatedSchema<T extends object = Item> extends StandardSchemaV1<unknown, T> {
  /** The validation stage validated() links (validated.ts reads it). */
  readonly [VALIDATED]: unknown;
}

/** The TTL health check made by ttlHealth(attribute) (ttl-health.ts), the pipeline's `ttlAttribute`. */
export interface TtlHealth {
  /** The table's TTL attribute. */
  readonly attribute: string;
  /** The check ttlHealth() links (the compiler reads it). */
  readonly [TTL_HEALTH]: unknown;
}

/** One route of a pipeline: which records (`when`), and the sinks or handler they go to. */
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
   * Given as `validated(schema)`, which links the validation stage (a bare schema is refused).
   */
  // biome-ignore lint/suspicious/noExplicitAny: any item type
  item?: ValidatedSchema<any>;
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
 * `route({ when: 'insert', item: validated(orderSchema), to: sink })` gives the sink InsertRecord<Order>
 * (the schema's output), `entity<Order>(…)` types without checking, and without either the images
 * are plain Items. A sink typed for a narrower item than the route delivers is refused.
 */
export function route<const K extends RecordKind, E extends object = Item, T extends object = E>(config: {
  name?: string;
  when: K | readonly K[];
  entity?: EntityDiscriminator<E>;
  item?: ValidatedSchema<T>;
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
  item?: ValidatedSchema<T>;
  images?: ImagesChecked;
  to: RouteTargets<ClassifiedRecord<NoInfer<T>>>;
}): RouteConfig;
export function route(config: RouteConfig): RouteConfig {
  return config;
}

/** What a route's handler receives besides the record: the sink context, an abort signal and the pipeline's logger. */
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
  item?: ValidatedSchema<T>;
  /** Which images `item` must accept (see ImagesChecked). Default `'new'`. */
  images?: ImagesChecked;
} & {
  [K in RecordKind]?: (record: RecordOfKind<K, T>, context: HandlerContext) => unknown;
};

/** How records are delivered: in shard order, or concurrently across keys with per-key order. */
export type OrderingConfig = 'ordered' | { mode: 'ordered' } | { mode: 'per-key'; concurrency: number };

/** The pipeline's `retry` option: delivery attempts and backoff within one invocation. */
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

/** What happens to a record no route takes: counted, dead-lettered, or failed. */
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
  /**
   * `ttlHealth('expiresAt')`, naming the table's TTL attribute: INSERT/MODIFY records whose TTL
   * never expires are logged and counted. ttlHealth() links the check into the handler (a bare
   * attribute name is refused, naming it). Default: no check.
   */
  ttlAttribute?: TtlHealth;
  /**
   * Include item images in the TTL warning, and let the default logger write images instead of
   * `[Redacted]` (a logger you give redacts by its own settings). Default false.
   */
  logImages?: boolean;
  /**
   * A pino-style logger (`child`, `warn(fields, message)`, …); a Powertools Logger as
   * `fromPowertoolsLogger(logger, { logImages? })`, which links the adapter into the handler (a
   * bare Powertools Logger is refused, naming that call). Default createJsonLogger().
   */
  logger?: PipelineLogger;
  /**
   * tidewater's EMF line settings, a Powertools Metrics instance (as `{ target }`), or false.
   * Left out: one EMF line per invocation in Lambda (where `AWS_LAMBDA_FUNCTION_NAME` is set),
   * none elsewhere (tests, the local emulator, scripts); `TIDEWATER_METRICS=on` or `off` decides
   * instead. Given: always as given.
   */
  metrics?: MetricsConfig | MetricsTarget | false;
  /**
   * `sinkTracer(tracer)` with a Powertools Tracer (or anything with its getSegment()): each sink
   * write gets its own subsegment, annotated with the sink, its record count and its failures.
   * Default: none, and then sinks are called as they are (and the handler links no tracing).
   */
  tracer?: SinkTracer;
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
