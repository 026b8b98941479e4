import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { type ArchiveRow, decodeObject } from '../../../src/archive/format.js';
import { readArchive, readArchiveRows } from '../../../src/archive.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';

export const TABLE = 'archive-sample';
/** Every test's records are in hours of 2026-01-15: long closed. */
export const HOUR_10 = Date.UTC(2026, 0, 15, 10);
export const HOUR_11 = Date.UTC(2026, 0, 15, 11);
export const HOUR = 3_600_000;
export const WIDE = { from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' };

/** Every object of a bucket under a prefix: key, ETag and body, in key order. */
export async function snapshot(s3: S3Client, bucket: string, prefix = '') {
  const objects = new Map<string, { etag: string | undefined; body: Buffer }>();
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const item of page.Contents ?? []) {
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: item.Key }));
      objects.set(item.Key as string, {
        etag: item.ETag,
        body: Buffer.from(
          await (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
        ),
      });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return objects;
}

/** The rows of every archive object (`.ndjson.gz`) in a snapshot, copies included. */
export function rawRows(objects: Map<string, { body: Buffer }>): ArchiveRow[] {
  return [...objects]
    .filter(([key]) => key.endsWith('.ndjson.gz'))
    .flatMap(([key, { body }]) => decodeObject(body, key));
}

export const rowId = (row: { shard: string; sequenceNumber: string; eventID: string }) =>
  `${row.shard}/${row.sequenceNumber}/${row.eventID}`;

/** How many rows of the raw objects are copies of another. */
export function duplicateRows(objects: Map<string, { body: Buffer }>): number {
  const rows = rawRows(objects);
  return rows.length - new Set(rows.map(rowId)).size;
}

export async function readBack(
  s3: S3Client,
  bucket: string,
  options: { prefix?: string; tenant?: string; partitionBy?: (r: ClassifiedRecord) => string } = {},
): Promise<ClassifiedRecord[]> {
  const out: ClassifiedRecord[] = [];
  for await (const record of readArchive({ client: s3, bucket, table: TABLE, ...WIDE, ...options }))
    out.push(record);
  return out;
}

export async function readRowsBack(s3: S3Client, bucket: string, prefix?: string): Promise<ArchiveRow[]> {
  const out: ArchiveRow[] = [];
  for await (const row of readArchiveRows({
    client: s3,
    bucket,
    table: TABLE,
    ...WIDE,
    ...(prefix ? { prefix } : {}),
  })) {
    out.push(row);
  }
  return out;
}
