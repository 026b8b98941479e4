import { aggregateVotes } from '../votes/aggregate.js';
import { aggregatorOptionsFromEnv } from '../votes/env-config.js';
import { defaultDynamoDbClient } from '../votes/options.js';
import { type AggregationSummary, aggregationEmf } from '../votes/summary.js';

// Read once per container: a missing TABLE_NAME / POLL fails the init, loudly, before any event;
// the client (and its connections) is reused by every warm invocation. The client makes one
// attempt per request: aggregateVotes retries itself, and SDK retries would multiply its attempts.
const options = { ...aggregatorOptionsFromEnv(process.env), dynamodb: defaultDynamoDbClient() };

// One EMF line per run (CloudWatch turns it into metrics), also for a run that then throws.
const emfLogger = {
  info(summary: AggregationSummary, message: string): void {
    process.stdout.write(`${JSON.stringify({ ...aggregationEmf(summary), message })}\n`);
  },
};

/**
 * Scheduled (EventBridge) entry point: recompute the poll's totals. The event carries nothing we
 * need. A partial run throws AggregationIncompleteError, so the invocation shows in the Errors
 * metric; the next scheduled run recomputes everything anyway.
 */
export async function handler(): Promise<AggregationSummary> {
  return aggregateVotes({ ...options, logger: emfLogger });
}
