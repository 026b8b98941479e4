import {
  BatchWriteItemCommand,
  DynamoDBClient,
  type AttributeValue as SdkAttributeValue,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import pRetry from 'p-retry';
import { InvalidOptionsError } from '../records/errors.js';
import type { AttributeMap, AttributeValue, ClassifiedRecord } from '../records/types.js';
import type { ArchiveRow } from './archive-format.js';
import { RestoreError } from './errors.js';
import { assertOptions, optionalClient, positiveInteger, requiredString } from './options.js';

export interface RestoreItemsOptions {
  tableName: string;
  /** Records (e.g. from readArchive): REMOVE records restore their old image, others their new image. */
  records?: Iterable<ClassifiedRecord> | AsyncIterable<ClassifiedRecord>;
  /** Archive rows (from readArchiveRows), same rule. */
  rows?: Iterable<ArchiveRow> | AsyncIterable<ArchiveRow>;
  /** Default `new DynamoDBClient({})`. Its retry configuration applies to each call. */
  client?: DynamoDBClient;
  /** Resubmissions of UnprocessedItems (throttling), with exponential backoff and jitter. Default 8. */
  unprocessedRetries?: number;
  signal?: AbortSignal;
}

export interface RestoreResult {
  /** Items written (after collapsing several images of the same key within a call to the last). */
  written: number;
  /** BatchWriteItem calls made, resubmissions included. */
  calls: number;
}

const OPTIONS = ['tableName', 'records', 'rows', 'client', 'unprocessedRetries', 'signal'] as const;
const WHERE = 'restoreItems';
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
  image: AttributeMap;
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
  return { keys: d.Keys, image };
}

function fromRow(row: ArchiveRow): Restorable {
  const image = row.eventName === 'REMOVE' ? row.oldImage : row.newImage;
  if (image === undefined) throw new RestoreError(`the archived row carries no image to restore`, row);
  return { keys: row.keys, image };
}

/** Stable text of a key: BatchWriteItem rejects a call naming one key twice. */
function keyText(keys: AttributeMap): string {
  return JSON.stringify(
    Object.keys(keys)
      .sort()
      .map((k) => [k, keys[k]]),
  );
}

class UnprocessedItemsLeft extends Error {
  override name = 'UnprocessedItemsLeft';
}

/**
 * Writes archived images back to a table, 25 per BatchWriteItem, resubmitting UnprocessedItems
 * with backoff. Images are the raw DynamoDB JSON of the archive, so items come back exactly.
 * Later images of the same key replace earlier ones (last write in stream order wins).
 */
export async function restoreItems(options: RestoreItemsOptions): Promise<RestoreResult> {
  if (options === undefined) throw new InvalidOptionsError(`${WHERE}: options are required`);
  assertOptions(options, OPTIONS, WHERE);
  const tableName = requiredString(options, 'tableName', WHERE);
  const client = optionalClient<DynamoDBClient>(options, WHERE) ?? new DynamoDBClient({});
  if ((options.records === undefined) === (options.rows === undefined)) {
    throw new InvalidOptionsError(`${WHERE}: pass exactly one of 'records' and 'rows'`);
  }
  const retries =
    options.unprocessedRetries === undefined
      ? 8
      : positiveInteger(options, 'unprocessedRetries', WHERE, 8, 20);
  const result: RestoreResult = { written: 0, calls: 0 };

  const flush = async (batch: Map<string, Restorable>): Promise<void> => {
    let requests: WriteRequest[] = [...batch.values()].map((r) => ({
      PutRequest: { Item: toSdkMap(r.image) },
    }));
    result.written += requests.length;
    await pRetry(
      async () => {
        result.calls++;
        const response = await client.send(
          new BatchWriteItemCommand({ RequestItems: { [tableName]: requests } }),
          {
            abortSignal: options.signal,
          },
        );
        const left = response.UnprocessedItems?.[tableName] ?? [];
        if (left.length === 0) return;
        requests = left;
        throw new UnprocessedItemsLeft(`${left.length} items unprocessed`);
      },
      {
        retries,
        minTimeout: 50,
        maxTimeout: 5_000,
        factor: 2,
        randomize: true,
        signal: options.signal,
        shouldRetry: ({ error }) => error instanceof UnprocessedItemsLeft,
      },
    );
  };

  let batch = new Map<string, Restorable>();
  const add = async (item: Restorable): Promise<void> => {
    const id = keyText(item.keys);
    // A second image of a key in the same call: write what we have first, so the later one wins.
    if (batch.has(id) || batch.size === BATCH) {
      await flush(batch);
      batch = new Map();
    }
    batch.set(id, item);
  };
  if (options.records !== undefined)
    for await (const record of options.records) await add(fromRecord(record));
  else if (options.rows !== undefined) for await (const row of options.rows) await add(fromRow(row));
  if (batch.size > 0) await flush(batch);
  return result;
}
