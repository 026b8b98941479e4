import { createHash, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { DescribeTableCommand, type DynamoDBClient, paginateScan } from '@aws-sdk/client-dynamodb';
import {
  type _Record,
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { defineOptions } from '../../core/options.js';
import { toJsonAttributeMap, toLambdaRecord } from '../../records/convert.js';
import { keyIdentity } from '../../records/key-identity.js';
import { canonicalNumberText } from '../../records/number-canonical.js';
import type { AttributeMap, LambdaStreamRecord } from '../../records/types.js';

/**
 * A DynamoDB export to S3 made from a DynamoDB Local table, in the layout and line format
 * ExportTableToPointInTime writes (which DynamoDB Local lacks): the backfill reads it exactly as
 * it reads a real export.
 */
export interface LocalExportOptions {
  /** A client for DynamoDB Local. */
  dynamodb: DynamoDBClient;
  /** For an incremental export: a DynamoDB Streams client for the same server. */
  streams?: DynamoDBStreamsClient;
  table: string;
  s3: S3Client;
  bucket: string;
  /** The export prefix; the export goes under `<prefix>/AWSDynamoDB/<exportId>/`. Default none. */
  prefix?: string;
  /** `full`: every item, as a Scan reads it now. `incremental`: the changes the table's stream holds between `from` and `to`. */
  type: 'full' | 'incremental';
  /** Incremental: epoch ms, inclusive start of the range. Default: the stream's oldest record. */
  from?: number;
  /** Incremental: epoch ms, exclusive end; also the export time. Default now. */
  to?: number;
  /** How many data files the items are spread over (a real export writes one or more per partition). Default 3. */
  files?: number;
}

/** A DynamoDB export written to the local S3 server by writeLocalExport. */
export interface LocalExport {
  readonly bucket: string;
  /** The export's folder, `<prefix>/AWSDynamoDB/<exportId>`: what `backfill --from-export` takes. */
  readonly prefix: string;
  readonly exportArn: string;
  /** Epoch milliseconds. */
  readonly exportTime: number;
  readonly itemCount: number;
  readonly dataFiles: readonly string[];
}

const readOptions = /* @__PURE__ */ defineOptions<LocalExportOptions>()('writeLocalExport', {
  dynamodb: { kind: 'client', required: true },
  streams: { kind: 'client' },
  table: { kind: 'nonEmptyString', required: true },
  s3: { kind: 'client', required: true },
  bucket: { kind: 'nonEmptyString', required: true },
  prefix: { kind: 'string', default: '' },
  type: { kind: 'enum', values: ['full', 'incremental'], required: true },
  from: { kind: 'number', min: 0 },
  to: { kind: 'number', min: 0 },
  files: { kind: 'integer', min: 1, max: 1000, default: 3 },
});

async function fullLines(dynamodb: DynamoDBClient, table: string): Promise<string[]> {
  const lines: string[] = [];
  for await (const page of paginateScan({ client: dynamodb }, { TableName: table, ConsistentRead: true }))
    for (const item of page.Items ?? []) lines.push(JSON.stringify({ Item: toJsonAttributeMap(item) }));
  return lines;
}

async function streamRecords(
  streams: DynamoDBStreamsClient,
  streamArn: string,
): Promise<LambdaStreamRecord[]> {
  const out: LambdaStreamRecord[] = [];
  const shards =
    (await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }))).StreamDescription?.Shards ?? [];
  for (const shard of shards) {
    let iterator = (
      await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shard.ShardId!,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      )
    ).ShardIterator;
    while (iterator !== undefined) {
      const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
      const records: _Record[] = page.Records ?? [];
      for (const r of records) out.push(toLambdaRecord(r, { streamArn }));
      // An open shard hands out iterators forever: an empty page is its end for now.
      iterator = records.length === 0 ? undefined : page.NextShardIterator;
    }
  }
  return out;
}

/**
 * A key as the table stores it: DynamoDB Local's MODIFY record carries a number key as the request
 * spelt it (`1.50`), while an export, like every other read, holds the stored form (`1.5`).
 */
function storedKeys(keys: AttributeMap): AttributeMap {
  const out: AttributeMap = Object.create(null);
  for (const [name, value] of Object.entries(keys))
    out[name] = value.N === undefined ? value : { N: canonicalNumberText(value.N) };
  return out;
}

/**
 * An incremental export's lines: per item changed in [from, to), its image before the range
 * (OldImage) and after it (NewImage), with the last write's time — what DynamoDB's
 * NEW_AND_OLD_IMAGES view holds. An item created and deleted within the range leaves a delete
 * with its keys alone: harmless to a sink that never had it, and DynamoDB Local stamps stream
 * records to the minute, so "created within the range" may be a write just before it.
 * Changes are grouped by key value (records/key-identity): writes keyed `1.5` and `1.50` are one
 * item and make one line, as in DynamoDB's own export.
 */
export function incrementalLines(records: readonly LambdaStreamRecord[], from: number, to: number): string[] {
  const byKey = new Map<
    string,
    {
      keys: AttributeMap;
      old: AttributeMap | undefined;
      now: AttributeMap | undefined;
      at: number;
      existedBefore: boolean;
    }
  >();
  for (const r of records) {
    const at = (r.dynamodb.ApproximateCreationDateTime ?? 0) * 1000;
    if (at < from || at >= to) continue;
    const id = keyIdentity(r.dynamodb.Keys);
    const seen = byKey.get(id);
    const now = r.eventName === 'REMOVE' ? undefined : r.dynamodb.NewImage;
    if (seen === undefined)
      byKey.set(id, {
        keys: storedKeys(r.dynamodb.Keys),
        old: r.dynamodb.OldImage,
        now,
        at,
        existedBefore: r.eventName !== 'INSERT',
      });
    else Object.assign(seen, { now, at });
  }
  const lines: string[] = [];
  for (const { keys, old, now, at, existedBefore } of byKey.values()) {
    const line: Record<string, unknown> = {
      Metadata: { WriteTimestampMicros: { N: String(Math.round(at * 1000)) } },
      Keys: keys,
    };
    if (existedBefore && old !== undefined) line.OldImage = old;
    if (now !== undefined) line.NewImage = now;
    lines.push(JSON.stringify(line));
  }
  return lines;
}

async function put(s3: S3Client, bucket: string, key: string, body: string | Uint8Array): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
}

/**
 * Writes a DYNAMODB_JSON export of a DynamoDB Local table to the S3 server: manifest-summary.json,
 * manifest-files.json (one line per data file, with its item count and checksums) and
 * `data/*.json.gz`, under `<prefix>/AWSDynamoDB/<exportId>/`. A full export is the table as a
 * consistent Scan reads it; an incremental one is built from the table's stream (its view type
 * must be NEW_AND_OLD_IMAGES) between `from` and `to`.
 */
export async function writeLocalExport(options: LocalExportOptions): Promise<LocalExport> {
  const o = readOptions(options);
  const table = (await o.dynamodb.send(new DescribeTableCommand({ TableName: o.table }))).Table!;
  const started = Date.now();
  let lines: string[];
  let exportTime: number;
  if (o.type === 'full') {
    exportTime = started;
    lines = await fullLines(o.dynamodb, o.table);
  } else {
    if (o.streams === undefined || table.LatestStreamArn === undefined)
      throw readOptions.fail('an incremental export needs `streams` and a table with a stream', 'streams');
    exportTime = o.to ?? started;
    lines = incrementalLines(await streamRecords(o.streams, table.LatestStreamArn), o.from ?? 0, exportTime);
  }
  const exportId = `${String(started).padStart(13, '0')}-${randomBytes(4).toString('hex')}`;
  const base = `${o.prefix === '' ? '' : `${o.prefix.replace(/\/+$/, '')}/`}AWSDynamoDB/${exportId}`;
  const manifest: string[] = [];
  const dataFiles: string[] = [];
  for (let f = 0; f < o.files; f++) {
    const own = lines.filter((_, i) => i % o.files === f);
    const body = gzipSync(own.map((l) => `${l}\n`).join(''));
    const key = `${base}/data/${randomBytes(12).toString('hex')}.json.gz`;
    await put(o.s3, o.bucket, key, body);
    dataFiles.push(key);
    const md5 = createHash('md5').update(body);
    manifest.push(
      JSON.stringify({
        itemCount: own.length,
        md5Checksum: md5.copy().digest('base64'),
        etag: md5.digest('hex'),
        dataFileS3Key: key,
      }),
    );
  }
  const manifestFilesKey = `${base}/manifest-files.json`;
  await put(o.s3, o.bucket, manifestFilesKey, manifest.map((l) => `${l}\n`).join(''));
  const exportArn = `${table.TableArn}/export/${exportId}`;
  const iso = (ms: number) => new Date(ms).toISOString();
  const summary: Record<string, unknown> = {
    version: o.type === 'full' ? '2020-06-30' : '2023-08-01',
    exportArn,
    startTime: iso(started),
    endTime: iso(Date.now()),
    tableArn: table.TableArn,
    tableId: table.TableId,
    exportTime: iso(exportTime),
    s3Bucket: o.bucket,
    s3Prefix: o.prefix === '' ? null : o.prefix,
    s3SseAlgorithm: 'AES256',
    s3SseKmsKeyId: null,
    manifestFilesS3Key: manifestFilesKey,
    billedSizeBytes: 0,
    itemCount: lines.length,
    outputFormat: 'DYNAMODB_JSON',
    exportType: o.type === 'full' ? 'FULL_EXPORT' : 'INCREMENTAL_EXPORT',
  };
  if (o.type === 'incremental') {
    summary.exportFromTime = iso(o.from ?? 0);
    summary.exportToTime = iso(exportTime);
    summary.outputView = 'NEW_AND_OLD_IMAGES';
  }
  await put(o.s3, o.bucket, `${base}/manifest-summary.json`, JSON.stringify(summary));
  return { bucket: o.bucket, prefix: base, exportArn, exportTime, itemCount: lines.length, dataFiles };
}
