/** What one aggregation run did; logged and returned, and the source of the EMF metrics. */
export interface AggregationSummary {
  poll: string;
  contestants: number;
  shards: number;
  /** Shard keys requested (contestants × shards). */
  shardsRead: number;
  /** Totals SET because the recomputed sum was higher than the published one. */
  totalsWritten: number;
  /** Totals left alone because the sum equals the published total (no write). */
  totalsUnchanged: number;
  /** Totals left alone because a concurrent run already published an equal or higher sum. */
  totalsSuperseded: number;
  /** Contestants not recomputed (requests failed after every retry, or a corrupt counter). */
  failedContestants: number;
  requests: { query: number; batchGetItem: number; updateItem: number };
  /** Retries after throttling or transient failures. */
  retries: number;
  /** BatchGetItem calls re-sent for UnprocessedKeys. */
  unprocessedRetries: number;
  consumedReadCapacityUnits: number;
  consumedWriteCapacityUnits: number;
  durationMs: number;
}

/** Options of the aggregation summary's EMF line: namespace and timestamp. */
export interface EmfOptions {
  /** CloudWatch namespace (default `tidewater/votes`). */
  namespace?: string;
  /** Milliseconds since the epoch (default now). */
  timestamp?: number;
}

/**
 * The summary as one CloudWatch Embedded Metric Format object: print it as a single JSON line
 * from Lambda and CloudWatch turns it into metrics with dimension Poll, no API call needed.
 */
export function aggregationEmf(
  summary: AggregationSummary,
  options: EmfOptions = {},
): Record<string, unknown> {
  const metrics: Array<[string, number, 'Count' | 'Milliseconds']> = [
    ['Contestants', summary.contestants, 'Count'],
    ['ShardsRead', summary.shardsRead, 'Count'],
    ['TotalsWritten', summary.totalsWritten, 'Count'],
    ['TotalsUnchanged', summary.totalsUnchanged, 'Count'],
    ['TotalsSuperseded', summary.totalsSuperseded, 'Count'],
    ['FailedContestants', summary.failedContestants, 'Count'],
    ['BatchGetItemCalls', summary.requests.batchGetItem, 'Count'],
    ['Retries', summary.retries, 'Count'],
    ['UnprocessedRetries', summary.unprocessedRetries, 'Count'],
    ['ConsumedReadCapacityUnits', summary.consumedReadCapacityUnits, 'Count'],
    ['ConsumedWriteCapacityUnits', summary.consumedWriteCapacityUnits, 'Count'],
    ['Duration', summary.durationMs, 'Milliseconds'],
  ];
  const line: Record<string, unknown> = {
    _aws: {
      Timestamp: options.timestamp ?? Date.now(),
      CloudWatchMetrics: [
        {
          Namespace: options.namespace ?? 'tidewater/votes',
          Dimensions: [['Poll']],
          Metrics: metrics.map(([Name, , Unit]) => ({ Name, Unit })),
        },
      ],
    },
    Poll: summary.poll,
  };
  for (const [name, value] of metrics) line[name] = value;
  return line;
}
