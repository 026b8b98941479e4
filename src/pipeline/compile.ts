// The option readers and the compiler: a PipelineConfig checked (a typo fails loudly) and made
// into the plan (plan.ts) the per-record path reads.
// Not the logging index: that also loads pino, which the default logger exists to avoid.
import { SINK_WRITE_POLICY } from '../core/backoff.js';
import { defineOptions, describe } from '../core/options.js';
import type { EntityDiscriminator } from '../filters/entity.js';
import { defaultJsonLogger } from '../logging/json-logger.js';
import { TTL_HEURISTIC_OPTION } from '../records/classify.js';
import { NUMBERS_OPTION } from '../records/numbers.js';
import { createStreamRecordParser } from '../records/parse.js';
import { isObject as isPlainObject } from '../records/shape.js';
import type { ClassifiedRecord, RecordKind } from '../records/types.js';
import type { Sink } from '../sinks/types.js';
import type {
  HandlerContext,
  ImagesChecked,
  ItemSchema,
  KindHandlers,
  PipelineConfig,
  PipelineLogger,
  RecordPredicate,
  RetryConfig,
  RouteConfig,
  ValidatedSchema,
} from './config.js';
import { compileMetrics, isMetricsTarget } from './metrics.js';
import { type CompiledConfig, type CompiledRoute, HANDLER_BIT, KIND_BIT, KINDS, MAX_SINKS } from './plan.js';
import { SOURCE_OPTION } from './source-option.js';
import { TRACER_OPTION } from './tracing.js';
import { TTL_HEALTH, TTL_HEALTH_OPTION } from './ttl-health-key.js';
import { isValidated, type SchemaUse, type ValidationStage, validationStageOf } from './validated.js';

function isPlainObjectOrInstance(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}

const UNROUTED = ['count', 'dead-letter', 'fail'] as const;
const WHEN = 'a kind, a list of kinds or a predicate (matching(pattern) for a filter pattern)';
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
  ttlAttribute: TTL_HEALTH_OPTION,
  logImages: { kind: 'boolean', default: false },
  // A Powertools Logger is given as fromPowertoolsLogger(logger): only a handler that calls it links
  // the adapter (a bare one has no child(), so it is refused here, naming the call).
  logger: {
    kind: 'custom',
    expected:
      "a pino-compatible logger (child, debug, info, warn, error); a Powertools Logger as fromPowertoolsLogger(logger) (import { fromPowertoolsLogger } from 'tidewater')",
    check: (v) =>
      isPlainObjectOrInstance(v) &&
      typeof (v as PipelineLogger).child === 'function' &&
      typeof (v as PipelineLogger).warn === 'function',
  },
  metrics: {
    kind: 'custom',
    expected: 'an object, a Powertools Metrics instance or false',
    check: (v) => v === false || isPlainObject(v) || isMetricsTarget(v),
  },
  tracer: TRACER_OPTION,
  onUnrouted: { kind: 'enum', values: UNROUTED, default: 'count' },
  parse: AN_OBJECT,
  source: SOURCE_OPTION,
  clock: { kind: 'function', default: Date.now },
});

// A bare schema is refused naming the call that links the validation stage (validated.ts).
const ITEM_SCHEMA = {
  kind: 'custom',
  expected:
    "a Standard Schema wrapped by validated() (import { validated } from 'tidewater'; item: validated(schema) " +
    'for a zod ≥ 3.24, valibot ≥ 1 or arktype schema), which links the validation stage into the handler',
  check: isValidated,
} as const;

const IMAGES_CHECKED = { kind: 'enum', values: ['new', 'all'] } as const;

const readRoute = /* @__PURE__ */ defineOptions<RouteConfig>()('pipeline', {
  name: { kind: 'nonEmptyString' },
  when: {
    kind: 'custom',
    expected: WHEN,
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

const DEFAULT_RETRY = SINK_WRITE_POLICY;
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
  fail(`${where}.when must be ${WHEN}`);
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

/** An item schema (unwrapped: two validated() of one schema are one schema), its images and its stage. */
interface StagedUse extends SchemaUse {
  readonly stage: ValidationStage;
}

function schemaUse(item: ItemSchema | undefined, images: ImagesChecked | undefined): StagedUse | null {
  if (item === undefined) {
    if (images !== undefined) fail("'images' says which images 'item' checks: give 'item' with it");
    return null;
  }
  // The reader let only validated() schemas through.
  const stage = validationStageOf(item as ValidatedSchema);
  return { schema: stage.schema, images: images ?? 'new', stage };
}

interface CompiledRoutes {
  routes: CompiledRoute[];
  sinks: Sink[];
  /** Per sink, the item schema of the routes that reach it (null: none). */
  sinkSchemas: (StagedUse | null)[];
}

function compileRoutes(routes: readonly unknown[] | undefined): CompiledRoutes {
  if (routes === undefined) return { routes: [], sinks: [], sinkSchemas: [] };
  const sinks: Sink[] = [];
  const sinkSchemas: (StagedUse | null)[] = [];
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
      } else {
        // Two uses differ only when one has a schema: its stage (validated()) judges them.
        const kept = sinkSchemas[index]!;
        if (kept !== schema)
          (kept ?? schema)!.stage.checkSameUse(kept, schema, `${where}: sink ${sinkName(sink)}`);
      }
      sinkMask |= 1 << index;
    }
    compiled.push({ name: route.name ?? `route-${n}`, kindMask, test, sinkMask });
  });
  return { routes: compiled, sinks, sinkSchemas };
}

/**
 * The validation stage and its schemas, compiled by the stage validated() linked; none (and -1
 * for every sink) when no route or handler has an item schema.
 */
function compileSchemas(
  sinks: readonly Sink[],
  perSink: readonly (StagedUse | null)[],
  handlerSchema: StagedUse | null,
): Pick<CompiledConfig, 'schemas' | 'sinkSchemas' | 'handlerSchema' | 'validate'> {
  const stage = (perSink.find((use) => use !== null) ?? handlerSchema)?.stage;
  if (stage === undefined)
    return { schemas: [], sinkSchemas: perSink.map(() => -1), handlerSchema: -1, validate: undefined };
  return { ...stage.compile(sinks.map(sinkName), perSink, handlerSchema), validate: stage.validate };
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
  schema: StagedUse | null;
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

/** Validates a pipeline config and precomputes everything the per-record path needs. */
export function compileConfig<T extends object>(config: PipelineConfig<T>): CompiledConfig {
  if (config === undefined) fail('config must be an object, got undefined');
  const c = readConfig(config);
  const compiledRoutes = compileRoutes(c.routes);
  const { routes, sinkSchemas } = compiledRoutes;
  const tracer = c.tracer;
  const sinks =
    tracer === undefined ? compiledRoutes.sinks : compiledRoutes.sinks.map((sink) => tracer.wrap(sink));
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
    // The reader let only ttlHealth() values through.
    ttlHealth: c.ttlAttribute?.[TTL_HEALTH] as CompiledConfig['ttlHealth'],
    logImages: c.logImages,
    logger: c.logger ?? (defaultJsonLogger(c.logImages) as PipelineLogger),
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
