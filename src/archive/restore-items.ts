import {
  BatchWriteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  type AttributeValue as SdkAttributeValue,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import pLimit from 'p-limit';
import { PartialFailureError } from '../core/errors.js';
import { defineOptions } from '../core/options.js';
import { RETRY_POLICIES, type RetryPolicy, withAttempts, withRetry } from '../core/retry.js';
import { InvalidAttributeValueError } from '../records/errors.js';
import { type KeyIdentity, keyIdentity } from '../records/key-identity.js';
import type { AttributeMap, AttributeValue, ClassifiedRecord } from '../records/types.js';
import { RestoreError, RestoreWriteError } from './errors.js';
import type { ArchiveRow } from './format.js';

/**
 * What to do with the TTL attribute of a restored image. Left as archived, its time is past, so
 * on a table with TTL enabled the item would expire (and be archived) again within hours.
 */
export type RestoreTtl =
  /** Drop the attribute: the item no longer expires. */
  | { attribute: string; remove: true }
  /** Set it to this epoch-seconds time. */
  | { attribute: string; value: number };

/** Options of restoreItems: the table, the records or rows, overwrite and TTL rules, concurrency. */
export interface RestoreItemsOptions {
  tableName: string;
  /** Records (e.g. from readArchive): REMOVE records restore their old image, others their new image. */
  records?: Iterable<ClassifiedRecord> | AsyncIterable<ClassifiedRecord>;
  /** Archive rows (from readArchiveRows), same rule. */
  rows?: Iterable<ArchiveRow> | AsyncIterable<ArchiveRow>;
  /** Default `new DynamoDBClient({})`. Its retry configuration applies to each call. */
  client?: DynamoDBClient;
  /**
   * Default false: one PutItem per item with `attribute_not_exists(<key attribute>)`, so an item
   * that exists again (re-created since it expired, or restored by an earlier run) is kept and
   * counted in `skipped`. true: BatchWriteItem, 25 per call, replacing whatever is there.
   */
  overwrite?: boolean;
  /** Remove the TTL attribute or give it a new value. Default: images are written as archived. */
  ttl?: RestoreTtl;
  /** Parallel PutItem calls when not overwriting. Default 16. */
  concurrency?: number;
  /** Called with the keys of each image not written because the item exists. */
  onSkipped?: (keys: AttributeMap) => void;
  /** Resubmissions of UnprocessedItems (throttling) when overwriting, with exponential backoff and jitter. Default 8. */
  unprocessedRetries?: number;
  signal?: AbortSignal;
}

/** What restoreItems did: items written, skipped and failed. */
export interface RestoreResult {
  /** Items written, counted once each write succeeded. */
  written: number;
  /** Images not written because their item exists (never with `overwrite`). */
  skipped: number;
  /** PutItem or BatchWriteItem calls made, resubmissions included. */
  calls: number;
}

const ITERABLE = {
  kind: 'custom',
  expected: 'an iterable or async iterable',
  check: (v: unknown) =>
    v !== null &&
    typeof v === 'object' &&
    (typeof (v as Iterable<unknown>)[Symbol.iterator] === 'function' ||
      typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function'),
} as const;

const readOptions = /* @__PURE__ */ defineOptions<RestoreItemsOptions>()('restoreItems', {
  tableName: { kind: 'nonEmptyString', required: true },
  records: ITERABLE,
  rows: ITERABLE,
  client: { kind: 'client' },
  overwrite: { kind: 'boolean', default: false },
  ttl: {
    kind: 'custom',
    expected: '{ attribute, remove: true } or { attribute, value }',
    check: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
  },
  concurrency: { kind: 'integer', min: 1, max: 256, default: 16 },
  onSkipped: { kind: 'function' },
  unprocessedRetries: { kind: 'integer', min: 1, max: 20, default: RETRY_POLICIES.restoreBatch.attempts - 1 },
  signal: { kind: 'object', expected: 'an AbortSignal', methods: ['throwIfAborted'] },
});

const readTtl = /* @__PURE__ */ defineOptions<{ attribute: string; remove?: true; value?: number }>()(
  'restoreItems',
  {
    attribute: { kind: 'nonEmptyString', required: true },
    remove: { kind: 'enum', values: [true] },
    value: { kind: 'integer', min: 0 },
  },
);
/** BatchWriteItem's limit. */
const BATCH = 25;

/** Lambda-shape binaries are base64 text; the SDK client sends and expects bytes. */
function toSdkValue(av: AttributeValue): SdkAttributeValue {
  if (av.B !== undefined) return { B: Buffer.from(av.B, 'base64') };
  if (av.BS !== undefined) return { BS: av.BS.map((b) => Buffer.from(b, 'base64')) };
  if (av.M !== undefined) return { M: toSdkMap(av.M) };
  if (av.L !== undefined) return { L: av.L.map(toSdkValue) };
  return av as SdkAttributeValue;
}

function toSdkMap(map: AttributeMap): Record<string, SdkAttributeValue> {
  const out: Record<string, SdkAttributeValue> = {};
  for (const key of Object.keys(map)) {
    const value = toSdkValue(map[key] as AttributeValue);
    if (key === '__proto__')
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out;
}

interface Restorable {
  keys: AttributeMap;
  /** Which item: two images of one key are one item however their numbers are spelled. */
  id: KeyIdentity;
  image: AttributeMap;
  eventID: string | undefined;
  sequenceNumber: string | undefined;
}

function fromRecord(record: ClassifiedRecord): Restorable {
  const d = record.raw.dynamodb;
  const image = record.eventName === 'REMOVE' ? d.OldImage : d.NewImage;
  if (image === undefined) {
    throw new RestoreError(
      `the record carries no ${record.eventName === 'REMOVE' ? 'OldImage' : 'NewImage'} (stream view ${d.StreamViewType ?? 'unknown'})`,
      record,
    );
  }
  return {
    keys: d.Keys,
    id: itemOf(d.Keys, record),
    image,
    eventID: record.eventID,
    sequenceNumber: record.sequenceNumber,
  };
}

function fromRow(row: ArchiveRow): Restorable {
  const image = row.eventName === 'REMOVE' ? row.oldImage : row.newImage;
  if (image === undefined) throw new RestoreError(`the archived row carries no image to restore`, row);
  return {
    keys: row.keys,
    id: itemOf(row.keys, row),
    image,
    eventID: row.eventID,
    sequenceNumber: row.sequenceNumber,
  };
}

/**
 * The item a key names, by value (BatchWriteItem rejects a call naming one item twice, `1.5` and
 * `1.50` included); a RestoreError for keys DynamoDB could not hold.
 */
function itemOf(
  keys: AttributeMap,
  record: { eventID?: string | undefined; sequenceNumber?: string | undefined },
): KeyIdentity {
  try {
    return keyIdentity(keys);
  } catch (error) {
    if (!(error instanceof InvalidAttributeValueError)) throw error;
    throw new RestoreError(`its keys are not a DynamoDB key (${error.message})`, record);
  }
}

function resolveTtl(ttl: RestoreTtl | undefined): ((image: AttributeMap) => AttributeMap) | undefined {
  if (ttl === undefined) return undefined;
  const { attribute, remove, value } = readTtl(ttl, readTtl.where, 'ttl.');
  if ((remove === undefined) === (value === undefined)) {
    throw readTtl.fail("ttl needs exactly one of 'remove: true' and 'value'", 'ttl');
  }
  if (remove === true) {
    return (image) => {
      if (!Object.hasOwn(image, attribute)) return image;
      const { [attribute]: _dropped, ...rest } = image;
      return rest;
    };
  }
  const av: AttributeValue = { N: String(value) };
  return (image) => ({ ...image, [attribute]: av });
}

function isConditionFailed(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';
}

/**
 * Writes archived images back to a table. Images are the raw DynamoDB JSON of the archive, so
 * items come back exactly (but for the `ttl` option). By default an item that exists is left
 * alone; later images of one key replace earlier ones of the same call (stream order wins).
 */
export async function restoreItems(options: RestoreItemsOptions): Promise<RestoreResult> {
  const o = readOptions(options);
  const { tableName, concurrency, onSkipped } = o;
  const client = o.client ?? new DynamoDBClient({});
  if ((o.records === undefined) === (o.rows === undefined)) {
    throw readOptions.fail("pass exactly one of 'records' and 'rows'");
  }
  const retry = withAttempts(RETRY_POLICIES.restoreBatch, o.unprocessedRetries + 1);
  const adjust = resolveTtl(o.ttl);
  const toItem = (r: Restorable) => toSdkMap(adjust === undefined ? r.image : adjust(r.image));
  const result: RestoreResult = { written: 0, skipped: 0, calls: 0 };
  const items: AsyncIterable<Restorable> = (async function* () {
    if (o.records !== undefined) for await (const record of o.records) yield fromRecord(record);
    else if (o.rows !== undefined) for await (const row of o.rows) yield fromRow(row);
  })();

  if (o.overwrite) {
    await overwriteAll(items, { client, tableName, retry, signal: o.signal, toItem, result });
  } else {
    await putAbsent(items, {
      client,
      tableName,
      concurrency,
      signal: o.signal,
      toItem,
      onSkipped,
      result,
    });
  }
  return result;
}

interface Writer {
  client: DynamoDBClient;
  tableName: string;
  signal: AbortSignal | undefined;
  toItem: (r: Restorable) => Record<string, SdkAttributeValue>;
  result: RestoreResult;
}

/** BatchWriteItem, 25 at a time; a key already in the batch starts a new one, so the later image wins. */
async function overwriteAll(
  items: AsyncIterable<Restorable>,
  w: Writer & { retry: RetryPolicy },
): Promise<void> {
  const { client, tableName, result } = w;
  const flush = async (batch: Map<string, Restorable>): Promise<void> => {
    let requests: WriteRequest[] = [...batch.values()].map((r) => ({ PutRequest: { Item: w.toItem(r) } }));
    try {
      await withRetry(
        async () => {
          result.calls++;
          const response = await client.send(
            new BatchWriteItemCommand({ RequestItems: { [tableName]: requests } }),
            { abortSignal: w.signal },
          );
          const left = response.UnprocessedItems?.[tableName] ?? [];
          result.written += requests.length - left.length;
          if (left.length === 0) return;
          requests = left;
          throw new PartialFailureError(left.length);
        },
        {
          policy: w.retry,
          retryable: (error) => error instanceof PartialFailureError,
          signal: w.signal,
        },
      );
    } catch (error) {
      throw new RestoreWriteError(tableName, batch.values().next().value ?? {}, result, { cause: error });
    }
  };

  let batch = new Map<string, Restorable>();
  for await (const item of items) {
    const id = item.id;
    if (batch.has(id) || batch.size === BATCH) {
      await flush(batch);
      batch = new Map();
    }
    batch.set(id, item);
  }
  if (batch.size > 0) await flush(batch);
}

/**
 * PutItem with attribute_not_exists on a key attribute (an existing item has every key
 * attribute, so one suffices), `concurrency` at a time. Images of one key run in order: once
 * this call wrote the key, a later image replaces it unconditionally; once the key was found
 * existing, later images are skipped too.
 */
async function putAbsent(
  items: AsyncIterable<Restorable>,
  w: Writer & { concurrency: number; onSkipped: ((keys: AttributeMap) => void) | undefined },
): Promise<void> {
  const { client, tableName, result } = w;
  const limit = pLimit(w.concurrency);
  /** Per key: did this call write it (true), find it existing (false), or fail (undefined)? */
  const outcome = new Map<string, Promise<boolean | undefined> | boolean | undefined>();
  const inFlight = new Set<Promise<unknown>>();
  let failure: { item: Restorable; cause: unknown } | undefined;
  /** Set by a failed write or a failed input: queued puts then return without writing. */
  let stopped = false;

  const put = async (item: Restorable, conditional: boolean): Promise<boolean> => {
    result.calls++;
    try {
      await client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: w.toItem(item),
          ...(conditional
            ? {
                ConditionExpression: 'attribute_not_exists(#key)',
                ExpressionAttributeNames: { '#key': Object.keys(item.keys)[0] as string },
              }
            : {}),
        }),
        { abortSignal: w.signal },
      );
    } catch (error) {
      if (!(conditional && isConditionFailed(error))) throw error;
      result.skipped++;
      w.onSkipped?.(item.keys);
      return false;
    }
    result.written++;
    return true;
  };

  const restore = async (item: Restorable, before: Promise<boolean | undefined> | boolean | undefined) => {
    const earlier = before === undefined ? undefined : await before;
    if (stopped) return undefined;
    if (earlier === false) {
      result.skipped++;
      w.onSkipped?.(item.keys);
      return false;
    }
    try {
      return await limit(() => (stopped ? undefined : put(item, earlier !== true)));
    } catch (error) {
      failure ??= { item, cause: error };
      stopped = true;
      return undefined;
    }
  };

  let inputError: { error: unknown } | undefined;
  try {
    for await (const item of items) {
      if (stopped) break;
      const id = item.id;
      const task = restore(item, outcome.get(id));
      outcome.set(id, task);
      // Keep the settled value, not the promise, so the map holds one boolean per key.
      const tracked = task.then((done) => {
        if (outcome.get(id) === task) outcome.set(id, done);
        inFlight.delete(tracked);
      });
      inFlight.add(tracked);
      // Bounded read-ahead: a restore of millions of images never queues them all.
      if (inFlight.size >= w.concurrency * 2) await Promise.race(inFlight);
    }
  } catch (error) {
    // A record without an image, or a failed archive read: stop, but do not return while puts
    // already sent are still running — the caller must see the table as the restore left it.
    inputError = { error };
    stopped = true;
  }
  // Queued puts see `stopped` and return without writing; let in-flight ones settle so the counts are final.
  await Promise.all(inFlight);
  if (inputError !== undefined) throw inputError.error;
  if (failure !== undefined) {
    throw new RestoreWriteError(tableName, failure.item, result, { cause: failure.cause });
  }
}
