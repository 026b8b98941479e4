import { describe, expect, it } from 'vitest';
import { type AggregationSummary, aggregationEmf } from '../../../src/votes/index.js';

const summary: AggregationSummary = {
  poll: 'final',
  contestants: 1000,
  shards: 20,
  shardsRead: 20_000,
  totalsWritten: 12,
  totalsUnchanged: 985,
  totalsSuperseded: 3,
  failedContestants: 0,
  requests: { query: 4, batchGetItem: 210, updateItem: 12 },
  retries: 2,
  unprocessedRetries: 5,
  consumedReadCapacityUnits: 420,
  consumedWriteCapacityUnits: 12,
  durationMs: 1234,
};

describe('aggregationEmf', () => {
  it('declares every metric it carries, with the poll as the dimension', () => {
    const line = aggregationEmf(summary, { namespace: 'ns', timestamp: 1_700_000_000_000 });
    const aws = line._aws as {
      Timestamp: number;
      CloudWatchMetrics: Array<{
        Namespace: string;
        Dimensions: string[][];
        Metrics: Array<{ Name: string }>;
      }>;
    };
    expect(aws.Timestamp).toBe(1_700_000_000_000);
    const [directive] = aws.CloudWatchMetrics;
    expect(directive?.Namespace).toBe('ns');
    expect(directive?.Dimensions).toEqual([['Poll']]);
    expect(line.Poll).toBe('final');
    for (const { Name } of directive?.Metrics ?? []) expect(typeof line[Name]).toBe('number');
    expect(line).toMatchObject({
      BatchGetItemCalls: 210,
      TotalsWritten: 12,
      ShardsRead: 20_000,
      Duration: 1234,
    });
  });
});
