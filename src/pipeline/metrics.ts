import type { CompiledConfig, CompiledMetrics, MetricsTarget } from './config.js';

/** What one invocation counted. Plain numbers so the hot path only increments. */
export class InvocationMetrics {
  records = 0;
  inserts = 0;
  modifies = 0;
  userDeletes = 0;
  ttlDeletes = 0;
  malformed = 0;
  unrouted = 0;
  /** Records reported in batchItemFailures' range: the first failed one and every one after it. */
  failed = 0;
  deadLettered = 0;
  ttlNeverExpires = 0;
  retries = 0;
  iteratorAgeMs = 0;
  readonly routed: number[];

  constructor(sinkCount: number) {
    this.routed = new Array<number>(sinkCount).fill(0);
  }
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
] as const;

/**
 * The same metrics, added to a Powertools Metrics instance: it serializes them with its own
 * namespace and dimensions (and timestamp) when published.
 */
function addToTarget(
  target: MetricsTarget,
  publish: boolean,
  routedNames: readonly string[],
  metrics: InvocationMetrics,
  durationMs: number,
): void {
  for (const [name, field] of COUNT_METRICS) target.addMetric(name, 'Count', metrics[field]);
  for (let i = 0; i < routedNames.length; i++) target.addMetric(routedNames[i]!, 'Count', metrics.routed[i]!);
  target.addMetric('IteratorAgeMs', 'Milliseconds', metrics.iteratorAgeMs);
  target.addMetric('DurationMs', 'Milliseconds', durationMs);
  if (publish) target.publishStoredMetrics();
}

/**
 * One CloudWatch Embedded Metric Format line per invocation: CloudWatch Logs turns it into
 * metrics without an API call (nothing to fail or slow the batch). Per-sink counts are metrics
 * named `Routed.<sink>` because one EMF directive carries one set of dimension values.
 *
 * With a Powertools Metrics target the metrics go to the target instead (published by it, or
 * by its logMetrics middleware) and the line is empty: the compiled writer then ignores it.
 */
/** Hands an invocation's metrics on: to the configured target, or as one EMF line to the writer. */
export function publishMetrics(
  config: CompiledConfig,
  metrics: InvocationMetrics,
  durationMs: number,
  timestamp: number,
): void {
  const settings = config.metrics!;
  if (settings.target !== undefined)
    addToTarget(settings.target, settings.publish, settings.routedNames, metrics, durationMs);
  else settings.writer.write(emfLine(settings, metrics, durationMs, timestamp));
}

function emfLine(
  settings: Extract<CompiledMetrics, { target: undefined }>,
  metrics: InvocationMetrics,
  durationMs: number,
  timestamp: number,
): string {
  const definitions: { Name: string; Unit: string }[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, field] of COUNT_METRICS) {
    definitions.push({ Name: name, Unit: 'Count' });
    values[name] = metrics[field];
  }
  settings.routedNames.forEach((name, i) => {
    definitions.push({ Name: name, Unit: 'Count' });
    values[name] = metrics.routed[i];
  });
  definitions.push(
    { Name: 'IteratorAgeMs', Unit: 'Milliseconds' },
    { Name: 'DurationMs', Unit: 'Milliseconds' },
  );
  values.IteratorAgeMs = metrics.iteratorAgeMs;
  values.DurationMs = durationMs;
  const document = {
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        {
          Namespace: settings.namespace,
          Dimensions: [Object.keys(settings.dimensions)],
          Metrics: definitions,
        },
      ],
    },
    ...settings.dimensions,
    ...values,
  };
  return `${JSON.stringify(document)}\n`;
}
