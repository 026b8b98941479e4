import {
  type AttributeValue,
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/servers/dynamodb-local.js';
import { createTestTable, localClients } from '../../support/aws.js';

/** A table with the key schema votes needs: pk (S) hash + sk (S) range. */
export async function createVotesTable() {
  const { dynamodb } = localClients();
  return createTestTable(dynamodb, {
    keySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    attributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
    ],
  });
}

/** A fresh client to the run's DynamoDB Local (one per simulated process, own middleware). */
export function newClient(): DynamoDBClient {
  const { dynamoEndpoint } = localClients();
  return new DynamoDBClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: dynamoEndpoint,
  });
}

/** Small seeded PRNG so a fault pattern is reproducible. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Counts requests by command name (e.g. `UpdateItemCommand`) as they leave the client. */
export function countRequests(client: DynamoDBClient): Map<string, number> {
  const counts = new Map<string, number>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? 'unknown';
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'countRequests', priority: 'high' },
  );
  return counts;
}

/** Every request's input as it leaves the client, with its command name (request shape checks). */
export function captureInputs(client: DynamoDBClient): Array<{ command: string; input: unknown }> {
  const sent: Array<{ command: string; input: unknown }> = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push({ command: context.commandName ?? 'unknown', input: structuredClone(args.input) });
      return next(args);
    },
    { step: 'initialize', name: 'captureInputs' },
  );
  return sent;
}

/** The most requests this client had in flight at once, by command name. */
export function trackInFlight(client: DynamoDBClient): { peak: Map<string, number>; peakAll: () => number } {
  const current = new Map<string, number>();
  const peak = new Map<string, number>();
  let all = 0;
  let peakAll = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? 'unknown';
      current.set(name, (current.get(name) ?? 0) + 1);
      peak.set(name, Math.max(peak.get(name) ?? 0, current.get(name)!));
      peakAll = Math.max(peakAll, ++all);
      try {
        return await next(args);
      } finally {
        current.set(name, current.get(name)! - 1);
        all--;
      }
    },
    { step: 'initialize', name: 'trackInFlight' },
  );
  return { peak, peakAll: () => peakAll };
}

export interface FaultPlan {
  /** Share of requests rejected with a throttle before they reach DynamoDB Local. */
  throttleRate: number;
  /** Share of BatchGetItem calls that send only half their keys and return the rest as UnprocessedKeys. */
  unprocessedRate?: number;
  seed: number;
}

export interface FaultCounts {
  throttled: number;
  stripped: number;
}

/**
 * Injects the failures DynamoDB produces under load through SDK middleware, DynamoDB Local still
 * answering underneath: throttles (ProvisionedThroughputExceededException, or a transaction
 * cancelled by TransactionConflict) that were never applied, and BatchGetItem calls that return
 * part of their keys as UnprocessedKeys. Added at `initialize`, outside the SDK's own retries,
 * so the votes code has to handle every one of them.
 */
export function injectFaults(client: DynamoDBClient, plan: FaultPlan): FaultCounts {
  const random = seededRandom(plan.seed);
  const counts: FaultCounts = { throttled: 0, stripped: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (random() < plan.throttleRate) {
        counts.throttled++;
        if (context.commandName === 'TransactWriteItemsCommand') {
          throw new TransactionCanceledException({
            message: 'injected: transaction cancelled',
            $metadata: {},
            CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
          });
        }
        throw new ProvisionedThroughputExceededException({ message: 'injected throttle', $metadata: {} });
      }
      if (context.commandName === 'BatchGetItemCommand' && random() < (plan.unprocessedRate ?? 0)) {
        const input = args.input as {
          RequestItems: Record<string, { Keys: Record<string, AttributeValue>[] }>;
        };
        const [table, request] = Object.entries(input.RequestItems)[0]!;
        if (request.Keys.length > 1) {
          counts.stripped++;
          const kept = request.Keys.filter((_, i) => i % 2 === 0);
          const stripped = request.Keys.filter((_, i) => i % 2 === 1);
          const result = await next({
            ...args,
            input: { ...input, RequestItems: { [table]: { ...request, Keys: kept } } },
          });
          const output = result.output as { UnprocessedKeys?: Record<string, unknown> };
          output.UnprocessedKeys = { [table]: { ...request, Keys: stripped } };
          return result;
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'injectFaults' },
  );
  return counts;
}

/** Applies the request, then reports a lost response: the ambiguous failure of reference 003. */
export function loseNextResponse(client: DynamoDBClient, commandName: string): { lost: number } {
  const state = { lost: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === commandName && state.lost === 0) {
        state.lost++;
        const error = new Error('injected: response lost after the write was applied');
        error.name = 'TimeoutError';
        throw error;
      }
      return result;
    },
    { step: 'initialize', name: 'loseNextResponse' },
  );
  return state;
}

/** Holds every BatchGetItem response until `release()`: a run that is slower than the others. */
export function holdBatchReads(client: DynamoDBClient) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrived!: () => void;
  const firstHeld = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === 'BatchGetItemCommand') {
        arrived();
        await released;
      }
      return result;
    },
    { step: 'initialize', name: 'holdBatchReads' },
  );
  return { release, firstHeld };
}

/**
 * Rethrows every error the client gets as what another copy of @aws-sdk/client-dynamodb would
 * throw (an application's own version, nested in its node_modules): the same name and fields,
 * DynamoDB Local's real answer underneath, but not built from the classes tidewater imports.
 * The votes code's `instanceof` checks hold only because the SDK's ServiceException matches such
 * errors by name and `$fault` / `$metadata` (Symbol.hasInstance); this keeps that assumption tested.
 */
export function foreignSdkErrors(client: DynamoDBClient): { rethrown: string[] } {
  const state = { rethrown: [] as string[] };
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const original = error as Error;
        state.rethrown.push(original.name);
        const foreign = Object.assign(new Error(original.message), original);
        foreign.name = original.name;
        throw foreign;
      }
    },
    { step: 'initialize', name: 'foreignSdkErrors' },
  );
  return state;
}
