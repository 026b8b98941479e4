import {
  DeleteItemCommand,
  type DynamoDBClient,
  PutItemCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { type ArchiveRow, decodeArchiveObject } from '../../src/archive.js';
import { startLogName, startOnce } from './cli-test.js';

/**
 * The orders the `tidewater start` tests write into an app's table and read back from its
 * archive: three expired (TTL deletes to come, one number of 38 digits), one live, one deleted by
 * hand. DynamoDB Local's own TTL sweep makes the deletes.
 */
export const EXPIRED_ORDERS = ['ORDER#0', 'ORDER#1', 'ORDER#2'];

/** Writes the orders into `table`; `key` adds other key attributes (a sort key) to each. */
export async function writeOrders(
  dynamodb: DynamoDBClient,
  table: string,
  options: { now: number; ttlAttribute?: string; key?: Record<string, { S: string }> },
): Promise<void> {
  const { now, ttlAttribute = 'expiresAt', key = {} } = options;
  for (const [i, pk] of EXPIRED_ORDERS.entries())
    await dynamodb.send(
      new PutItemCommand({
        TableName: table,
        Item: {
          pk: { S: pk },
          ...key,
          [ttlAttribute]: { N: String(now - 3600 - i) },
          total: { N: '12345678901234567890123456789012345678' },
        },
      }),
    );
  await dynamodb.send(
    new PutItemCommand({
      TableName: table,
      Item: { pk: { S: 'ORDER#live' }, ...key, [ttlAttribute]: { N: String(now + 86_400) } },
    }),
  );
  await dynamodb.send(
    new PutItemCommand({
      TableName: table,
      Item: { pk: { S: 'ORDER#cancelled' }, ...key, note: { S: 'by hand' } },
    }),
  );
  await dynamodb.send(
    new DeleteItemCommand({ TableName: table, Key: { pk: { S: 'ORDER#cancelled' }, ...key } }),
  );
}

/**
 * Waits until DynamoDB Local's TTL sweep (pages of 20, 10 s apart) has deleted the expired orders
 * of every table, leaving the live one; the bound only turns a hang into a failure.
 */
export async function awaitTtlSweep(dynamodb: DynamoDBClient, tables: readonly string[]): Promise<void> {
  for (const deadline = Date.now() + 240_000; ; ) {
    const left = await Promise.all(
      tables.map(async (table) => (await dynamodb.send(new ScanCommand({ TableName: table }))).Count),
    );
    if (left.every((count) => count === 1)) return;
    if (Date.now() > deadline) throw new Error(`TTL left ${left.join(', ')} items`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Every object under `prefix` in `bucket`, with its body. */
export async function bucketObjects(
  s3: S3Client,
  bucket: string,
  prefix: string,
): Promise<{ key: string; body: Uint8Array }[]> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return Promise.all(
    (listed.Contents ?? []).map(async ({ Key }) => {
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key }));
      return { key: Key as string, body: (await got.Body?.transformToByteArray()) ?? new Uint8Array() };
    }),
  );
}

/** The archive's rows under `archive/`, what a comparison between apps needs, in key order. */
export async function archivedOrders(
  s3: S3Client,
  bucket: string,
): Promise<Pick<ArchiveRow, 'kind' | 'keys' | 'oldImage' | 'ttl'>[]> {
  const rows = (await bucketObjects(s3, bucket, 'archive/')).flatMap(({ key, body }) =>
    decodeArchiveObject(body, key),
  );
  return rows
    .map((row) => ({ kind: row.kind, keys: row.keys, oldImage: row.oldImage, ttl: row.ttl }))
    .sort((a, b) => String(a.keys.pk?.S).localeCompare(String(b.keys.pk?.S)));
}

/**
 * Each app (`-c`, `--template` or `--cdk-out` and its path) started once with `tidewater start
 * --once` — resources created, handlers loaded, nothing to deliver yet; `check` reads its log —
 * the orders written into its table, then the TTL sweep awaited over all of them. The apps with
 * the names their start gave the table and the bucket.
 */
export async function ordersExpiredUnderStart<App extends { readonly flag: readonly string[] }>(
  dynamodb: DynamoDBClient,
  apps: readonly App[],
  options: {
    stage: string;
    now: number;
    check?: (app: App, log: string, table: string) => Promise<void> | void;
  },
): Promise<(App & { table: string; bucket: string })[]> {
  const out = [];
  for (const app of apps) {
    const log = await startOnce(app.flag, options.stage);
    const table = startLogName(log, 'table', /OrdersTable\w*/);
    const bucket = startLogName(log, 'bucket', /ArchiveBucket\w*/);
    await options.check?.(app, log, table);
    await writeOrders(dynamodb, table, { now: options.now });
    out.push({ ...app, table, bucket });
  }
  await awaitTtlSweep(
    dynamodb,
    out.map((app) => app.table),
  );
  return out;
}
