import { defineOptions } from '../core/options.js';
import type { ClassifiedRecord } from '../records/types.js';
import type { Sink } from '../sinks/types.js';
import type { InvocationMetrics } from './invocation-metrics.js';

function isObject(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}

/** The counts, in the line's order: each metric is its field's name capitalized (`ttlDeletes`: `TtlDeletes`). */
const COUNT_FIELDS = [
  'records',
  'inserts',
  'modifies',
  'userDeletes',
  'ttlDeletes',
  'malformed',
  'unrouted',
  'failed',
  'deadLettered',
  'ttlNeverExpires',
  'retries',
  'duplicates',
] as const satisfies readonly (keyof InvocationMetrics)[];
const COUNT_NAMES = COUNT_FIELDS.map((field) => field[0]!.toUpperCase() + field.slice(1));

/**
 * Counts the parsed records by kind into `metrics` and returns the iteratorAgeMs metric: the age,
 * at `now` (when the batch was routed), of its oldest record by ApproximateCreationDateTime.
 */
export function tallyRecords(
  records: readonly (ClassifiedRecord | undefined)[],
  metrics: InvocationMetrics,
  now: number,
): number {
  const n = records.length;
  let inserts = 0;
  let modifies = 0;
  let userDeletes = 0;
  let ttlDeletes = 0;
  let iteratorAgeMs = 0;
  for (let i = 0; i < n; i++) {
    const record = records[i];
    if (record === undefined) continue;
    const kind = record.kind;
    if (kind === 'insert') inserts++;
    else if (kind === 'modify') modifies++;
    else if (kind === 'user-delete') userDeletes++;
    else ttlDeletes++;
    const created = record.approximateCreationTime;
    if (created !== undefined) {
      const age = now - created * 1000;
      if (age > iteratorAgeMs) iteratorAgeMs = age;
    }
  }
  metrics.inserts = inserts;
  metrics.modifies = modifies;
  metrics.userDeletes = userDeletes;
  metrics.ttlDeletes = ttlDeletes;
  return iteratorAgeMs;
}

/**
 * The same metrics, added to a Powertools Metrics instance: it serializes them with its own
 * namespace and dimensions (and timestamp) when published.
 */
function addToTarget(
  target: MetricsTarget,
  publish: boolean,
  routedNames: readonly string[],
  metrics: InvocationMetrics,
  iteratorAgeMs: number,
  durationMs: number,
): void {
  for (let k = 0; k < COUNT_FIELDS.length; k++)
    target.addMetric(COUNT_NAMES[k]!, 'Count', metrics[COUNT_FIELDS[k]!]);
  for (let i = 0; i < routedNames.length; i++) target.addMetric(routedNames[i]!, 'Count', metrics.routed[i]!);
  target.addMetric('IteratorAgeMs', 'Milliseconds', iteratorAgeMs);
  target.addMetric('DurationMs', 'Milliseconds', durationMs);
  if (publish) target.publishStoredMetrics();
}

/**
 * One CloudWatch Embedded Metric Format line per invocation: CloudWatch Logs turns it into
 * metrics without an API call (nothing to fail or slow the batch). Per-sink counts are metrics
 * named `Routed.<sink>` because one EMF directive carries one set of dimension values.
 *
 * With a Powertools Metrics target the metrics go to the target instead (published by it, or by
 * its logMetrics middleware) and no line is written.
 */
export function publishMetrics(
  settings: CompiledMetrics,
  metrics: InvocationMetrics,
  iteratorAgeMs: number,
  durationMs: number,
  timestamp: number,
): void {
  if (settings.target !== undefined)
    addToTarget(settings.target, settings.publish, settings.routedNames, metrics, iteratorAgeMs, durationMs);
  else settings.writer.write(emfLine(settings.template, metrics, iteratorAgeMs, durationMs, timestamp));
}

/**
 * The fixed text of a pipeline's EMF line, built once from its config: per invocation only the
 * numbers are written in between. The directive alone is a dozen objects and most of the line.
 */
export interface EmfTemplate {
  /** `{"_aws":{"Timestamp":` */
  readonly start: string;
  /** The directive, closing `_aws`, then the dimension values. */
  readonly afterTimestamp: string;
  /** `,"Records":`…, one per count, then one per routed sink. */
  readonly keys: readonly string[];
  readonly iteratorAgeKey: string;
  readonly durationKey: string;
  /**
   * A dimension or sink name collides with another key of the line (or is index-like): the line
   * is parsed and stringified again, so one key holds one value, where a JSON object would have it.
   */
  readonly normalize: boolean;
}

/** The template of a pipeline's line, built once from its config. */
export function emfTemplate(
  namespace: string,
  dimensions: Readonly<Record<string, string>>,
  routedNames: readonly string[],
): EmfTemplate {
  const counts = [...COUNT_NAMES, ...routedNames];
  const dimensionNames = Object.keys(dimensions);
  const all = ['_aws', ...dimensionNames, ...counts, 'IteratorAgeMs', 'DurationMs'];
  const metrics = [
    ...counts.map((Name) => ({ Name, Unit: 'Count' })),
    { Name: 'IteratorAgeMs', Unit: 'Milliseconds' },
    { Name: 'DurationMs', Unit: 'Milliseconds' },
  ];
  const directive = JSON.stringify([
    { Namespace: namespace, Dimensions: [dimensionNames], Metrics: metrics },
  ]);
  const dimensionValues = JSON.stringify(dimensions).slice(1, -1);
  return {
    start: '{"_aws":{"Timestamp":',
    afterTimestamp: `,"CloudWatchMetrics":${directive}}${dimensionValues === '' ? '' : `,${dimensionValues}`}`,
    keys: counts.map((name) => `,${JSON.stringify(name)}:`),
    iteratorAgeKey: ',"IteratorAgeMs":',
    durationKey: ',"DurationMs":',
    // Index-like keys ("42") come first in an object whatever their insertion order.
    normalize: new Set(all).size !== all.length || all.some((key) => /^(0|[1-9]\d*)$/.test(key)),
  };
}

/** A number as JSON.stringify writes it. */
function json(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/** The line from its template: only the numbers are written per invocation. */
function emfLine(
  template: EmfTemplate,
  metrics: InvocationMetrics,
  iteratorAgeMs: number,
  durationMs: number,
  timestamp: number,
): string {
  const { keys } = template;
  let line = template.start + JSON.stringify(timestamp) + template.afterTimestamp;
  let k = 0;
  for (; k < COUNT_FIELDS.length; k++) line += keys[k]! + json(metrics[COUNT_FIELDS[k]!]);
  const routed = metrics.routed;
  for (let i = 0; i < routed.length; i++) line += keys[k + i]! + json(routed[i]!);
  line += `${template.iteratorAgeKey}${json(iteratorAgeMs)}${template.durationKey}${json(durationMs)}}`;
  // JSON.parse keeps a repeated key's last value at its first place, as the object would.
  return `${template.normalize ? JSON.stringify(JSON.parse(line)) : line}\n`;
}

/** Where the pipeline writes its EMF lines (default: stdout). */
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

/** The pipeline's `metrics` option: EMF namespace, dimensions, and where the lines go. */
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
      /** The line's fixed parts, built once. */
      readonly template: EmfTemplate;
    })
  | (CompiledMetricsBase & { readonly target: MetricsTarget; readonly publish: boolean });

export function isMetricsTarget(value: unknown): value is MetricsTarget {
  return (
    isObject(value) &&
    typeof (value as MetricsTarget).addMetric === 'function' &&
    typeof (value as MetricsTarget).publishStoredMetrics === 'function'
  );
}

const readMetrics = /* @__PURE__ */ defineOptions<MetricsConfig>()('pipeline', {
  namespace: { kind: 'nonEmptyString', default: 'Tidewater' },
  dimensions: {
    kind: 'custom',
    expected: 'a map of dimension names to string values',
    check: (v) =>
      isObject(v) &&
      !Array.isArray(v) &&
      Object.values(v as Record<string, unknown>).every((d) => typeof d === 'string'),
  },
  writer: { kind: 'object', methods: ['write'], expected: 'an object with a write(line) method' },
  target: {
    kind: 'object',
    methods: ['addMetric', 'publishStoredMetrics'],
    expected: 'a Powertools Metrics instance (addMetric, publishStoredMetrics)',
  },
  publish: { kind: 'boolean' },
});

function fail(detail: string): never {
  throw readMetrics.fail(detail);
}

/**
 * Whether a pipeline whose config leaves `metrics` out writes its EMF line: in Lambda, where
 * CloudWatch reads it from the log, yes; in tests and local runs it is only noise on stdout.
 */
export function metricsByDefault(env: Readonly<Record<string, string | undefined>>): boolean {
  const setting = env.TIDEWATER_METRICS;
  if (setting === 'on') return true;
  if (setting === 'off') return false;
  if (setting !== undefined && setting !== '')
    fail(
      `the environment variable TIDEWATER_METRICS must be on or off (got a value of ${setting.length} characters)`,
    );
  return env.AWS_LAMBDA_FUNCTION_NAME !== undefined && env.AWS_LAMBDA_FUNCTION_NAME !== '';
}

export function compileMetrics(
  metrics: MetricsConfig | MetricsTarget | false | undefined,
  sinks: readonly Sink[],
): CompiledMetrics | undefined {
  if (metrics === false || (metrics === undefined && !metricsByDefault(process.env))) return undefined;
  const routedNames = sinks.map((sink) => `Routed.${sink.name}`);
  // A Metrics instance given as is: the same as `{ target: instance }`.
  const given: MetricsConfig | undefined = isMetricsTarget(metrics) ? { target: metrics } : metrics;
  const m = readMetrics(given, 'pipeline', 'metrics.');
  if (m.target !== undefined) {
    for (const key of ['namespace', 'dimensions', 'writer'] as const)
      if (given?.[key] !== undefined)
        fail(`metrics.${key} does not apply with metrics.target: set it on the Metrics instance`);
    return { routedNames, target: m.target, publish: m.publish ?? true };
  }
  if (m.publish !== undefined) fail('metrics.publish applies to metrics.target only');
  const dimensions = m.dimensions ?? {};
  if (Object.keys(dimensions).length > 30)
    fail('metrics.dimensions: CloudWatch allows at most 30 dimensions');
  return {
    writer: m.writer ?? process.stdout,
    routedNames,
    target: undefined,
    template: emfTemplate(m.namespace, dimensions, routedNames),
  };
}
