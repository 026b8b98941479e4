import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { IdempotencyConfigOptions } from '@aws-lambda-powertools/idempotency/types';
import type { Context } from 'aws-lambda';
import type { ClassifiedRecord } from '../records/types.js';
import type { SinkContext } from '../sinks/types.js';
import { type IdempotencyKey, keyPayloadOf } from './record-key.js';

/** The options every idempotent wrapper takes. */
export interface IdempotencyOptions {
  /**
   * Where idempotency records are kept: a Powertools persistence layer, e.g.
   * `new DynamoDBPersistenceLayer({ tableName })` from `@aws-lambda-powertools/idempotency/dynamodb`.
   */
  persistenceStore: BasePersistenceLayer;
  /** Which deliveries are the same record. Default `'eventID'`. */
  key?: IdempotencyKey;
  /**
   * Powertools' IdempotencyConfig options (`expiresAfterSeconds`, `useLocalCache`, …), except
   * `eventKeyJmesPath`, which the key above decides. `expiresAfterSeconds` (Powertools' default:
   * 1 hour) must outlast the stream's redelivery window you care about: 24 hours covers every
   * redelivery of a DynamoDB stream record.
   */
  config?: Omit<IdempotencyConfigOptions, 'eventKeyJmesPath' | 'lambdaContext'>;
}

/** The options every wrapper reads, for defineOptions. */
export const IDEMPOTENCY_OPTIONS = {
  persistenceStore: {
    kind: 'object',
    methods: ['saveInProgress', 'saveSuccess', 'deleteRecord', 'getRecord'],
    expected: 'a Powertools persistence layer',
    required: true,
  },
  key: {
    kind: 'custom',
    expected: "'eventID', 'item-change' or a function of the record",
    check: (value: unknown) => value === 'eventID' || value === 'item-change' || typeof value === 'function',
  },
  config: { kind: 'object' },
} as const;

/** Runs `effect` for a record at most once per key and scope, remembering its (JSON) result. */
export type IdempotentRun = <R extends ClassifiedRecord>(
  record: R,
  context: SinkContext,
  effect: (record: R) => unknown,
) => Promise<unknown>;

const MAX_LAMBDA_TIMEOUT_MS = 900_000;

/** What Powertools reads of a Lambda context: the time left, for the in-progress record's expiry. */
function contextOf(context: SinkContext): Pick<Context, 'getRemainingTimeInMillis'> {
  const remaining = context.remainingTimeMs;
  return {
    getRemainingTimeInMillis: () => {
      const ms = remaining === undefined ? Number.POSITIVE_INFINITY : remaining();
      // Without a deadline (a script, a test) the in-progress marker needs a finite expiry all
      // the same: Lambda's longest timeout.
      return Number.isFinite(ms) ? Math.max(0, ms) : MAX_LAMBDA_TIMEOUT_MS;
    },
  };
}

/**
 * One scope of idempotency records (`scope` is the sink or handler name, so two sinks' side
 * effects for the same record are kept apart). Powertools' IdempotencyConfig keeps the Lambda
 * context it is given, so each run gets its own: invocations that overlap never share one.
 */
export function idempotentRun(scope: string, options: IdempotencyOptions): IdempotentRun {
  const { persistenceStore, key = 'eventID', config = {} } = options;
  const keyPrefix = `tidewater#${scope}`;
  return (record, context, effect) => {
    const run = makeIdempotent(
      async (_payload: { id: string }, lambda: { record: typeof record }) => {
        const result = await effect(lambda.record);
        // Powertools stores the result as JSON: a side effect's result is rarely that.
        return result === undefined ? null : result;
      },
      { persistenceStore, keyPrefix, config: new IdempotencyConfig({ ...config }) },
    );
    return run(keyPayloadOf(key, record), { ...contextOf(context), record } as never);
  };
}
