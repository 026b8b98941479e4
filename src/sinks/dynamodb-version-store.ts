import {
  type AttributeValue,
  BatchGetItemCommand,
  DynamoDBClient,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { sha256Hex } from '../core/digest.js';
import { PartialFailureError } from '../core/errors.js';
import { defineOptions } from '../core/options.js';
import { RETRY_POLICIES, withRetry } from '../core/retry.js';
import type { RecordVersion } from './record-version.js';
import type { VersionStore } from './version-store.js';

/** Options of DynamoDbVersionStore: the table, key attribute and client. */
export interface DynamoDbVersionStoreOptions {
  /** A table whose partition key (a string, no sort key) is `keyAttribute`. One per guarded sink. */
  tableName: string;
  /** Default `new DynamoDBClient({})` on first use (endpoint from `AWS_ENDPOINT_URL_DYNAMODB`). */
  client?: DynamoDBClient;
  /** The partition key's name. Default `pk`. */
  keyAttribute?: string;
  /** Where the version is kept. Default `version`. */
  versionAttribute?: string;
  /**
   * Seconds a tombstone (a delete's version) is kept: written as the epoch second it may expire at
   * in `ttlAttribute`, for the table's TTL to remove. Keep it longer than any record older than the
   * delete can still arrive (docs/backfill.md). Default: kept for good.
   */
  tombstoneSeconds?: number;
  /** The table's TTL attribute, with `tombstoneSeconds`. Default `expiresAt`. */
  ttlAttribute?: string;
}

const readOptions = /* @__PURE__ */ defineOptions<DynamoDbVersionStoreOptions>()('DynamoDbVersionStore', {
  tableName: { kind: 'nonEmptyString', required: true },
  client: { kind: 'client' },
  keyAttribute: { kind: 'nonEmptyString', default: 'pk' },
  versionAttribute: { kind: 'nonEmptyString', default: 'version' },
  tombstoneSeconds: { kind: 'integer', min: 1 },
  ttlAttribute: { kind: 'nonEmptyString', default: 'expiresAt' },
});

/** BatchGetItem's limit of keys per call. */
const GET_BATCH = 100;

/** DynamoDB's limit on a partition key value, in UTF-8 bytes. */
const MAX_PARTITION_KEY_BYTES = 2_048;

/**
 * The `pk` a key is stored under: the key itself, or for a key longer than a partition key may be
 * (an item whose own keys are near DynamoDB's limits) `#sha256:` and its digest. An item key never
 * starts with `#` (a key identity starts with a length), so the two kinds never meet.
 */
function storedKey(key: string): string {
  return Buffer.byteLength(key, 'utf8') <= MAX_PARTITION_KEY_BYTES ? key : `#sha256:${sha256Hex(key)}`;
}

/**
 * A VersionStore in a DynamoDB table: one item per key, `{ pk, version, deleted? }`. A commit is a
 * PutItem conditional on `attribute_not_exists(#v) OR #v < :v` (versions are fixed-width strings,
 * so DynamoDB's string order is their order); reads are consistent. IAM: dynamodb:BatchGetItem and
 * dynamodb:PutItem on the table.
 */
export class DynamoDbVersionStore implements VersionStore {
  readonly #o: ReturnType<typeof readOptions>;
  #client: DynamoDBClient | undefined;

  constructor(options: DynamoDbVersionStoreOptions) {
    this.#o = readOptions(options);
    this.#client = this.#o.client;
  }

  get #db(): DynamoDBClient {
    this.#client ??= new DynamoDBClient({});
    return this.#client;
  }

  async get(keys: readonly string[]): Promise<ReadonlyMap<string, RecordVersion>> {
    const { tableName, keyAttribute, versionAttribute } = this.#o;
    const out = new Map<string, RecordVersion>();
    for (let i = 0; i < keys.length; i += GET_BATCH) {
      // Stored key → the caller's key, for the answers (and one request per stored key).
      const asked = new Map<string, string>();
      for (const key of keys.slice(i, i + GET_BATCH)) asked.set(storedKey(key), key);
      let pending: Record<string, AttributeValue>[] = [...asked.keys()].map((key) => ({
        [keyAttribute]: { S: key },
      }));
      await withRetry(
        async () => {
          const answer = await this.#db.send(
            new BatchGetItemCommand({
              RequestItems: {
                [tableName]: {
                  Keys: pending,
                  ConsistentRead: true,
                  ProjectionExpression: '#k, #v',
                  ExpressionAttributeNames: { '#k': keyAttribute, '#v': versionAttribute },
                },
              },
            }),
          );
          for (const item of answer.Responses?.[tableName] ?? []) {
            const stored = item[keyAttribute]?.S;
            const key = stored === undefined ? undefined : asked.get(stored);
            const version = item[versionAttribute]?.S;
            if (key !== undefined && version !== undefined) out.set(key, version);
          }
          pending = (answer.UnprocessedKeys?.[tableName]?.Keys ?? []) as Record<string, AttributeValue>[];
          if (pending.length > 0) throw new PartialFailureError(pending.length);
        },
        { policy: RETRY_POLICIES.restoreBatch, retryable: (error) => error instanceof PartialFailureError },
      );
    }
    return out;
  }

  async commit(key: string, version: RecordVersion, deleted: boolean): Promise<boolean> {
    const { tableName, keyAttribute, versionAttribute, tombstoneSeconds, ttlAttribute } = this.#o;
    const item: Record<string, AttributeValue> = {
      [keyAttribute]: { S: storedKey(key) },
      [versionAttribute]: { S: version },
    };
    if (deleted) {
      item.deleted = { BOOL: true };
      if (tombstoneSeconds !== undefined)
        item[ttlAttribute] = { N: String(Math.floor(Date.now() / 1000) + tombstoneSeconds) };
    }
    try {
      await this.#db.send(
        new PutItemCommand({
          TableName: tableName,
          Item: item,
          ConditionExpression: 'attribute_not_exists(#v) OR #v < :v',
          ExpressionAttributeNames: { '#v': versionAttribute },
          ExpressionAttributeValues: { ':v': { S: version } },
        }),
      );
      return true;
    } catch (error) {
      if ((error as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }
}
