import type { CompiledConfig } from './config.js';

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
 * One CloudWatch Embedded Metric Format line per invocation: CloudWatch Logs turns it into
 * metrics without an API call (nothing to fail or slow the batch). Per-sink counts are metrics
 * named `Routed.<sink>` because one EMF directive carries one set of dimension values.
 */
export function emfLine(
  config: CompiledConfig,
  metrics: InvocationMetrics,
  durationMs: number,
  timestamp: number,
): string {
  const settings = config.metrics!;
  const definitions: { Name: string; Unit: string }[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, field] of COUNT_METRICS) {
    definitions.push({ Name: name, Unit: 'Count' });
    values[name] = metrics[field];
  }
  config.sinks.forEach((sink, i) => {
    const name = `Routed.${sink.name}`;
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
