import type { CompiledConfig, CompiledMetrics, MetricsTarget } from './config.js';
import type { Ledger } from './ledger.js';

/**
 * What one invocation counted, as small integers only: a field first holding 0 that later took a
 * fractional number would change its representation, and with it the object's hidden class (see
 * Ledger). Kinds are tallied from the records when the metrics are published, not per record.
 */
export interface InvocationMetrics {
  records: number;
  inserts: number;
  modifies: number;
  userDeletes: number;
  ttlDeletes: number;
  malformed: number;
  unrouted: number;
  /** Records reported in batchItemFailures' range: the first failed one and every one after it. */
  failed: number;
  deadLettered: number;
  ttlNeverExpires: number;
  retries: number;
  /** Exact duplicates dropped from a Kinesis batch (counted in `records`, handed to no sink). */
  duplicates: number;
  readonly routed: number[];
}

/** An object literal, not a class instance, for the reason given at Ledger. */
export function newInvocationMetrics(sinkCount: number): InvocationMetrics {
  return {
    records: 0,
    inserts: 0,
    modifies: 0,
    userDeletes: 0,
    ttlDeletes: 0,
    malformed: 0,
    unrouted: 0,
    failed: 0,
    deadLettered: 0,
    ttlNeverExpires: 0,
    retries: 0,
    duplicates: 0,
    routed: new Array<number>(sinkCount).fill(0),
  };
}

const COUNT_METRICS = [
  ['Records', 'records'],
  ['Inserts', 'inserts'],
  ['Modifies', 'modifies'],
  ['UserDeletes', 'userDeletes'],
  ['TtlDeletes', 'ttlDeletes'],
  ['Malformed', 'malformed'],
  ['Unrouted', 'unrouted'],
  ['Failed', 'failed'],
  ['DeadLettered', 'deadLettered'],
  ['TtlNeverExpires', 'ttlNeverExpires'],
  ['Retries', 'retries'],
  ['Duplicates', 'duplicates'],
] as const;

/**
 * Counts the parsed records by kind into `metrics` and returns the iteratorAgeMs metric: the age,
 * at `now` (when the batch was routed), of its oldest record by ApproximateCreationDateTime.
 */
export function tallyRecords(ledger: Ledger, now: number): number {
  const { metrics, records, n } = ledger;
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
  for (const [name, field] of COUNT_METRICS) target.addMetric(name, 'Count', metrics[field]);
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
  config: CompiledConfig,
  metrics: InvocationMetrics,
  iteratorAgeMs: number,
  durationMs: number,
  timestamp: number,
): void {
  const settings = config.metrics!;
  if (settings.target !== undefined)
    addToTarget(settings.target, settings.publish, settings.routedNames, metrics, iteratorAgeMs, durationMs);
  else {
    const template = settings.template;
    settings.writer.write(
      template === undefined
        ? genericEmfLine(settings, metrics, iteratorAgeMs, durationMs, timestamp)
        : emfLine(template, metrics, iteratorAgeMs, durationMs, timestamp),
    );
  }
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
  /** `,"Records":`…, one per COUNT_METRICS entry, then one per routed sink. */
  readonly keys: readonly string[];
  readonly iteratorAgeKey: string;
  readonly durationKey: string;
}

/**
 * The template, or undefined when a dimension or sink name collides with another key of the line:
 * then one JSON object key would stand for two values, which only the generic path (an object,
 * stringified) resolves as before.
 */
export function emfTemplate(
  namespace: string,
  dimensions: Readonly<Record<string, string>>,
  routedNames: readonly string[],
): EmfTemplate | undefined {
  const names = [...COUNT_METRICS.map(([name]) => name), ...routedNames, 'IteratorAgeMs', 'DurationMs'];
  const dimensionNames = Object.keys(dimensions);
  const all = ['_aws', ...dimensionNames, ...names];
  // Index-like keys ("42") come first in an object whatever their insertion order.
  if (new Set(all).size !== all.length || all.some((key) => /^(0|[1-9]\d*)$/.test(key))) return undefined;
  const directive = JSON.stringify([
    { Namespace: namespace, Dimensions: [dimensionNames], Metrics: definitions(routedNames) },
  ]);
  const dimensionValues = JSON.stringify(dimensions).slice(1, -1);
  return {
    start: '{"_aws":{"Timestamp":',
    afterTimestamp: `,"CloudWatchMetrics":${directive}}${dimensionValues === '' ? '' : `,${dimensionValues}`}`,
    keys: [...COUNT_METRICS.map(([name]) => name), ...routedNames].map((name) => `,${JSON.stringify(name)}:`),
    iteratorAgeKey: ',"IteratorAgeMs":',
    durationKey: ',"DurationMs":',
  };
}

function definitions(routedNames: readonly string[]): { Name: string; Unit: string }[] {
  const list: { Name: string; Unit: string }[] = [];
  for (const [name] of COUNT_METRICS) list.push({ Name: name, Unit: 'Count' });
  for (const name of routedNames) list.push({ Name: name, Unit: 'Count' });
  list.push({ Name: 'IteratorAgeMs', Unit: 'Milliseconds' }, { Name: 'DurationMs', Unit: 'Milliseconds' });
  return list;
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
  for (; k < COUNT_METRICS.length; k++) line += keys[k]! + json(metrics[COUNT_METRICS[k]![1]]);
  const routed = metrics.routed;
  for (let i = 0; i < routed.length; i++) line += keys[k + i]! + json(routed[i]!);
  return `${line}${template.iteratorAgeKey}${json(iteratorAgeMs)}${template.durationKey}${json(durationMs)}}\n`;
}

/** The line as an object stringified: what the template reproduces when no names collide. */
function genericEmfLine(
  settings: Extract<CompiledMetrics, { target: undefined }>,
  metrics: InvocationMetrics,
  iteratorAgeMs: number,
  durationMs: number,
  timestamp: number,
): string {
  const values: Record<string, unknown> = {};
  for (const [name, field] of COUNT_METRICS) values[name] = metrics[field];
  settings.routedNames.forEach((name, i) => {
    values[name] = metrics.routed[i];
  });
  values.IteratorAgeMs = iteratorAgeMs;
  values.DurationMs = durationMs;
  const document = {
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        {
          Namespace: settings.namespace,
          Dimensions: [Object.keys(settings.dimensions)],
          Metrics: definitions(settings.routedNames),
        },
      ],
    },
    ...settings.dimensions,
    ...values,
  };
  return `${JSON.stringify(document)}\n`;
}
