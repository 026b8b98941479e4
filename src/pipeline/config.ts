// Not the logging index: that also loads pino, which the default logger exists to avoid.
import { createJsonLogger } from '../logging/json-logger.js';
import {
  fromPowertoolsLogger,
  isPowertoolsLogger,
  type PowertoolsLoggerLike,
} from '../logging/powertools-logger.js';
import { InvalidOptionsError } from '../records/errors.js';
import { assertOptions, describe } from '../records/options.js';
import { createRecordParser, type ParseOptions, type RecordParser } from '../records/parse.js';
import type { ClassifiedRecord, RecordKind, RecordOfKind } from '../records/types.js';
import type { DeadLetterSink, Sink, SinkContext, SinkLogger } from '../sinks/types.js';
import { type EmfTemplate, emfTemplate } from './metrics.js';

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

export interface RouteConfig {
  /** Used in logs; default `route-<n>`. */
  name?: string;
  when: RouteCondition;
  // Sink methods are bivariant, so a Sink<TtlDeleteRecord> fits here; `route()` checks the pairing.
  // biome-ignore lint/suspicious/noExplicitAny: any record subtype
  to: Sink<any> | readonly Sink<any>[];
}

/** A route whose sinks are typed by the kinds it takes: `route({ when: 'ttl-delete', to: sink })`. */
export function route<const K extends RecordKind>(config: {
  name?: string;
  when: K | readonly K[];
  to: Sink<RecordOfKind<K>> | readonly Sink<RecordOfKind<K>>[];
}): RouteConfig {
  return config;
}

export interface HandlerContext extends SinkContext {
  readonly signal: AbortSignal;
  readonly logger: PipelineLogger;
}

/** Per-kind functions; each receives the record narrowed to its kind. A throw fails the record (then retries). */
export type KindHandlers = {
  [K in RecordKind]?: (record: RecordOfKind<K>, context: HandlerContext) => unknown;
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

export interface MetricsWriter {
  write(line: string): unknown;
}

/**
 * What tidewater uses of a Powertools Metrics instance (`@aws-lambda-powertools/metrics` 2.x),
 * typed structurally so tidewater needs no Powertools at run time.
 */
export interface MetricsTarget {
  addMetric(name: string, unit: 'Count' | 'Milliseconds', value: number): unknown;
  publishStoredMetrics(): unknown;
}

export interface MetricsConfig {
  /** CloudWatch namespace. Default `Tidewater`. */
  namespace?: string;
  /** Dimension name → value, on every metric. Default none. */
  dimensions?: Record<string, string>;
  /** Where EMF lines go. Default process.stdout (Lambda ships it to CloudWatch Logs). */
  writer?: MetricsWriter;
  /**
   * A Powertools Metrics instance: each invocation's metrics are added to it (addMetric) instead
   * of written as tidewater's own EMF line, so they carry its namespace, service and default
   * dimensions. Not with `namespace`, `dimensions` or `writer`: the instance has its own.
   */
  target?: MetricsTarget;
  /**
   * With `target`: call its publishStoredMetrics() once the invocation's metrics are added.
   * Default true; false when Powertools' logMetrics middleware (or your code) publishes them.
   */
  publish?: boolean;
}

interface CompiledMetricsBase {
  /** `Routed.<sink name>` per sink, in the order of CompiledConfig.sinks. */
  readonly routedNames: readonly string[];
}

/** The metrics settings the engine uses, checked and precomputed: an EMF line, or a target's calls. */
export type CompiledMetrics =
  | (CompiledMetricsBase & {
      readonly target: undefined;
      readonly writer: MetricsWriter;
      readonly namespace: string;
      readonly dimensions: Readonly<Record<string, string>>;
      /** The line's fixed parts, built once; undefined when names collide (the line is then built generically). */
      readonly template: EmfTemplate | undefined;
    })
  | (CompiledMetricsBase & { readonly target: MetricsTarget; readonly publish: boolean });

export type UnroutedPolicy = 'count' | 'dead-letter' | 'fail';

export interface PipelineConfig {
  routes?: readonly RouteConfig[];
  handlers?: KindHandlers;
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
  /** tidewater's EMF line settings, a Powertools Metrics instance (as `{ target }`), or false. */
  metrics?: MetricsConfig | MetricsTarget | false;
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
  /** Epoch milliseconds; for tests. Default Date.now. */
  clock?: () => number;
}

const CONFIG_KEYS = [
  'routes',
  'handlers',
  'ordering',
  'deadLetter',
  'retry',
  'maxRecordAgeSeconds',
  'deadlineMarginMs',
  'ttlAttribute',
  'logImages',
  'logger',
  'metrics',
  'onUnrouted',
  'parse',
  'clock',
] as const;
const ROUTE_KEYS = ['name', 'when', 'to'] as const;
const RETRY_KEYS = ['attempts', 'baseDelayMs', 'maxDelayMs', 'retryable'] as const;
const METRICS_KEYS = ['namespace', 'dimensions', 'writer', 'target', 'publish'] as const;
const ORDERING_KEYS = ['mode', 'concurrency'] as const;
const PARSE_KEYS = ['numbers', 'ttlHeuristic', 'eager', 'validate'] as const;
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
  /**
   * Per kind, the routing mask its kind routes and handler give every record of that kind: the
   * per-record path only evaluates `predicateRoutes` on top (kind routes have no side effects, so
   * folding them here changes nothing a predicate could see).
   */
  readonly kindMasks: Readonly<Record<RecordKind, number>>;
  /** The routes with a predicate, in config order. */
  readonly predicateRoutes: readonly CompiledRoute[];
  readonly sinks: readonly Sink[];
  /** Indexed by KIND_BIT position order of KINDS. */
  readonly handlers: readonly (
    | ((record: ClassifiedRecord, context: HandlerContext) => unknown)
    | undefined
  )[];
  readonly handledKinds: number;
  readonly perKey: boolean;
  readonly concurrency: number;
  readonly deadLetter: DeadLetterSink | undefined;
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly retryable: ((error: unknown) => boolean) | undefined;
  readonly maxRecordAgeMs: number;
  readonly deadlineMarginMs: number;
  readonly ttlAttribute: string | undefined;
  readonly logImages: boolean;
  readonly logger: PipelineLogger;
  readonly metrics: CompiledMetrics | undefined;
  readonly onUnrouted: UnroutedPolicy;
  readonly parse: RecordParser;
  readonly clock: () => number;
}

function fail(detail: string): never {
  throw new InvalidOptionsError(`pipeline: ${detail}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function nonNegative(value: unknown, name: string, fallback: number, integer = false): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    (integer && !Number.isInteger(value))
  ) {
    fail(`'${name}' must be a non-negative ${integer ? 'integer' : 'number'}, got ${describe(value)}`);
  }
  return value;
}

function optionalFunction<F>(value: unknown, name: string): F | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') fail(`'${name}' must be a function, got ${describe(value)}`);
  return value as F;
}

function isKind(value: unknown): value is RecordKind {
  return typeof value === 'string' && (KINDS as readonly string[]).includes(value);
}

function isSink(value: unknown): value is Sink {
  return isPlainObjectOrInstance(value) && typeof (value as Sink).write === 'function';
}

function isPlainObjectOrInstance(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}

function sinkName(sink: Sink): string {
  return typeof sink.name === 'string' && sink.name !== '' ? sink.name : 'sink';
}

function compileRoutes(routes: unknown): { routes: CompiledRoute[]; sinks: Sink[] } {
  if (routes === undefined) return { routes: [], sinks: [] };
  if (!Array.isArray(routes)) fail(`'routes' must be an array, got ${describe(routes)}`);
  const sinks: Sink[] = [];
  const compiled: CompiledRoute[] = [];
  routes.forEach((r: unknown, n) => {
    const where = `routes[${n}]`;
    if (!isPlainObject(r)) fail(`${where} must be an object, got ${describe(r)}`);
    try {
      assertOptions(r, ROUTE_KEYS, where);
    } catch (error) {
      fail((error as Error).message);
    }
    const name = r.name === undefined ? `route-${n}` : r.name;
    if (typeof name !== 'string' || name === '') fail(`${where}.name must be a non-empty string`);
    let kindMask = 0;
    let test: ((record: ClassifiedRecord) => boolean) | undefined;
    const when = r.when;
    if (isKind(when)) kindMask = KIND_BIT[when];
    else if (Array.isArray(when)) {
      if (when.length === 0) fail(`${where}.when is an empty list of kinds`);
      for (const k of when) {
        if (!isKind(k)) fail(`${where}.when: unknown kind ${describe(k)} (known: ${KINDS.join(', ')})`);
        kindMask |= KIND_BIT[k];
      }
    } else if (typeof when === 'function') test = when as RecordPredicate;
    else if (isPlainObject(when)) {
      // The pipeline no longer compiles patterns itself, so that a handler without pattern routes
      // does not load (or bundle) the filter compiler.
      fail(
        `${where}.when: a filter pattern object is not a route condition; write when: matching(pattern) ` +
          "(import { matching } from 'tidewater'), which compiles the pattern once",
      );
    } else if (typeof when === 'string') {
      fail(`${where}.when: unknown kind ${JSON.stringify(when)} (known: ${KINDS.join(', ')})`);
    } else
      fail(
        `${where}.when must be a kind, a list of kinds or a predicate (matching(pattern) for a filter pattern)`,
      );
    const targets = Array.isArray(r.to) ? r.to : [r.to];
    if (targets.length === 0) fail(`${where}.to is empty`);
    let sinkMask = 0;
    for (const sink of targets) {
      if (!isSink(sink)) fail(`${where}.to must be a sink or a list of sinks (objects with write())`);
      let index = sinks.indexOf(sink);
      if (index === -1) {
        if (sinks.length === MAX_SINKS) fail(`at most ${MAX_SINKS} distinct sinks are supported`);
        index = sinks.push(sink) - 1;
      }
      sinkMask |= 1 << index;
    }
    compiled.push({ name, kindMask, test, sinkMask });
  });
  return { routes: compiled, sinks };
}

function compileOrdering(ordering: unknown): { perKey: boolean; concurrency: number } {
  if (ordering === undefined || ordering === 'ordered') return { perKey: false, concurrency: 1 };
  if (!isPlainObject(ordering)) fail(`'ordering' must be 'ordered' or { mode: 'per-key', concurrency }`);
  try {
    assertOptions(ordering, ORDERING_KEYS, 'ordering');
  } catch (error) {
    fail((error as Error).message);
  }
  if (ordering.mode === 'ordered') {
    if (ordering.concurrency !== undefined) fail("ordering: 'concurrency' applies to mode 'per-key' only");
    return { perKey: false, concurrency: 1 };
  }
  if (ordering.mode !== 'per-key')
    fail(`ordering.mode must be 'ordered' or 'per-key', got ${describe(ordering.mode)}`);
  const c = ordering.concurrency;
  if (typeof c !== 'number' || !Number.isInteger(c) || c < 1) {
    fail(`ordering.concurrency must be a positive integer, got ${describe(c)}`);
  }
  return { perKey: true, concurrency: c };
}

function compileHandlers(handlers: unknown): { list: CompiledConfig['handlers']; mask: number } {
  const list: ((record: ClassifiedRecord, context: HandlerContext) => unknown)[] | undefined[] = [];
  let mask = 0;
  if (handlers === undefined) return { list, mask };
  if (!isPlainObject(handlers)) fail(`'handlers' must be an object, got ${describe(handlers)}`);
  try {
    assertOptions(handlers, KINDS, 'handlers');
  } catch (error) {
    fail((error as Error).message);
  }
  KINDS.forEach((kind, i) => {
    const h = optionalFunction<(record: ClassifiedRecord, context: HandlerContext) => unknown>(
      handlers[kind],
      `handlers.${kind}`,
    );
    (list as unknown[])[i] = h;
    if (h !== undefined) mask |= KIND_BIT[kind];
  });
  return { list, mask };
}

function isMetricsTarget(value: unknown): value is MetricsTarget {
  return (
    isPlainObjectOrInstance(value) &&
    typeof (value as MetricsTarget).addMetric === 'function' &&
    typeof (value as MetricsTarget).publishStoredMetrics === 'function'
  );
}

function compileTarget(metrics: Record<string, unknown>, routedNames: string[]): CompiledMetrics {
  const { target, publish } = metrics;
  if (!isMetricsTarget(target))
    fail('metrics.target must be a Powertools Metrics instance (addMetric, publishStoredMetrics)');
  for (const key of ['namespace', 'dimensions', 'writer'])
    if (metrics[key] !== undefined)
      fail(`metrics.${key} does not apply with metrics.target: set it on the Metrics instance`);
  if (publish !== undefined && typeof publish !== 'boolean') fail('metrics.publish must be a boolean');
  return { routedNames, target, publish: publish ?? true };
}

function compileMetrics(metrics: unknown, sinks: readonly Sink[]): CompiledMetrics | undefined {
  if (metrics === false) return undefined;
  if (metrics !== undefined && !isPlainObject(metrics))
    fail(`'metrics' must be an object, a Powertools Metrics instance or false`);
  const routedNames = sinks.map((sink) => `Routed.${sink.name}`);
  // A Metrics instance given as is: the same as `{ target: instance }`.
  if (isMetricsTarget(metrics)) return compileTarget({ target: metrics }, routedNames);
  try {
    assertOptions(metrics, METRICS_KEYS, 'metrics');
  } catch (error) {
    fail((error as Error).message);
  }
  if (metrics?.target !== undefined) return compileTarget(metrics, routedNames);
  if (metrics?.publish !== undefined) fail('metrics.publish applies to metrics.target only');
  const namespace = metrics?.namespace ?? 'Tidewater';
  if (typeof namespace !== 'string' || namespace === '') fail('metrics.namespace must be a non-empty string');
  const dimensions = metrics?.dimensions ?? {};
  if (!isPlainObject(dimensions) || Object.values(dimensions).some((v) => typeof v !== 'string')) {
    fail('metrics.dimensions must map dimension names to string values');
  }
  if (Object.keys(dimensions).length > 30)
    fail('metrics.dimensions: CloudWatch allows at most 30 dimensions');
  const writer = metrics?.writer ?? process.stdout;
  if (!isPlainObjectOrInstance(writer) || typeof (writer as MetricsWriter).write !== 'function') {
    fail('metrics.writer must have a write(line) method');
  }
  return {
    namespace,
    dimensions: dimensions as Record<string, string>,
    writer: writer as MetricsWriter,
    routedNames,
    target: undefined,
    template: emfTemplate(namespace, dimensions as Record<string, string>, routedNames),
  };
}

/** Recognized once here, so the per-line path never asks which kind of logger it has. */
function compileLogger(logger: unknown, logImages: boolean): PipelineLogger {
  if (logger === undefined) return createJsonLogger({ logImages }) as PipelineLogger;
  if (isPowertoolsLogger(logger)) return fromPowertoolsLogger(logger, { logImages });
  if (
    !isPlainObjectOrInstance(logger) ||
    typeof (logger as PipelineLogger).child !== 'function' ||
    typeof (logger as PipelineLogger).warn !== 'function'
  ) {
    fail(
      "'logger' must be a pino-compatible logger (child, debug, info, warn, error) or a Powertools Logger (createChild, debug, info, warn, error)",
    );
  }
  return logger as PipelineLogger;
}

const UNROUTED = ['count', 'dead-letter', 'fail'] as const;

/** Validates a pipeline config and precomputes everything the per-record path needs. */
export function compileConfig(config: PipelineConfig): CompiledConfig {
  if (!isPlainObject(config as unknown)) fail(`config must be an object, got ${describe(config)}`);
  try {
    assertOptions(config, CONFIG_KEYS, 'pipeline');
  } catch (error) {
    throw new InvalidOptionsError((error as Error).message);
  }
  const { routes, sinks } = compileRoutes(config.routes);
  const handlers = compileHandlers(config.handlers);
  if (routes.length === 0 && handlers.mask === 0) fail('give at least one route or handler');
  const kindMasks = { insert: 0, modify: 0, 'user-delete': 0, 'ttl-delete': 0 };
  for (const kind of KINDS) {
    const bit = KIND_BIT[kind];
    let mask = (handlers.mask & bit) === 0 ? 0 : HANDLER_BIT;
    for (const r of routes) if (r.test === undefined && (r.kindMask & bit) !== 0) mask |= r.sinkMask;
    kindMasks[kind] = mask;
  }
  const ordering = compileOrdering(config.ordering);
  const deadLetter = config.deadLetter;
  if (
    deadLetter !== undefined &&
    (!isPlainObjectOrInstance(deadLetter as unknown) ||
      typeof (deadLetter as DeadLetterSink).send !== 'function')
  ) {
    fail("'deadLetter' must be a dead-letter sink (an object with send())");
  }
  const retry = config.retry;
  if (retry !== undefined && !isPlainObject(retry)) fail(`'retry' must be an object, got ${describe(retry)}`);
  try {
    assertOptions(retry, RETRY_KEYS, 'retry');
  } catch (error) {
    fail((error as Error).message);
  }
  const attempts = nonNegative(retry?.attempts, 'retry.attempts', 3, true);
  if (attempts < 1) fail("'retry.attempts' counts the first attempt, so it must be at least 1");
  const baseDelayMs = nonNegative(retry?.baseDelayMs, 'retry.baseDelayMs', 100);
  const maxDelayMs = nonNegative(retry?.maxDelayMs, 'retry.maxDelayMs', 2000);
  if (maxDelayMs < baseDelayMs) fail("'retry.maxDelayMs' must not be below 'retry.baseDelayMs'");
  const maxAge = config.maxRecordAgeSeconds;
  const maxRecordAgeMs =
    maxAge === undefined ? Number.POSITIVE_INFINITY : nonNegative(maxAge, 'maxRecordAgeSeconds', 0) * 1000;
  const ttlAttribute = config.ttlAttribute;
  if (ttlAttribute !== undefined && (typeof ttlAttribute !== 'string' || ttlAttribute === '')) {
    fail("'ttlAttribute' must be a non-empty string");
  }
  if (config.logImages !== undefined && typeof config.logImages !== 'boolean')
    fail("'logImages' must be a boolean");
  const logger = compileLogger(config.logger, config.logImages ?? false);
  const onUnrouted = config.onUnrouted ?? 'count';
  if (!(UNROUTED as readonly string[]).includes(onUnrouted)) {
    fail(`'onUnrouted' must be one of ${UNROUTED.join(', ')}, got ${describe(onUnrouted)}`);
  }
  if (onUnrouted === 'dead-letter' && deadLetter === undefined) {
    fail("onUnrouted 'dead-letter' needs a 'deadLetter' sink");
  }
  const parseOptions = config.parse;
  try {
    assertOptions(parseOptions, PARSE_KEYS, 'parse');
  } catch (error) {
    fail((error as Error).message);
  }
  const clock = optionalFunction<() => number>(config.clock, 'clock') ?? Date.now;
  return {
    routes,
    kindMasks,
    predicateRoutes: routes.filter((r) => r.test !== undefined),
    sinks,
    handlers: handlers.list,
    handledKinds: handlers.mask,
    perKey: ordering.perKey,
    concurrency: ordering.concurrency,
    deadLetter,
    attempts,
    baseDelayMs,
    maxDelayMs,
    retryable: optionalFunction(retry?.retryable, 'retry.retryable'),
    maxRecordAgeMs,
    deadlineMarginMs: nonNegative(config.deadlineMarginMs, 'deadlineMarginMs', 1000),
    ttlAttribute,
    logImages: config.logImages ?? false,
    logger,
    metrics: compileMetrics(config.metrics, sinks),
    onUnrouted,
    parse: createRecordParser(parseOptions),
    clock,
  };
}

export { sinkName };
