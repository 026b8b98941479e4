/**
 * The backfill suite's export workload, shared by bench/suites/backfill.ts and the profile script
 * (bench/lib/backfill-profile.ts), so what is profiled is what is timed: seeded gzip DYNAMODB_JSON
 * data files on the local S3 server, read by backfillExportFile through a pipeline whose sink reads
 * every record's keys and image, and by two hand-written loops.
 */
import { createHash } from 'node:crypto';
import { pipeline as pipe, type Readable } from 'node:stream';
import { createGunzip, gzipSync } from 'node:zlib';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { unmarshall as sdkUnmarshall } from '@aws-sdk/util-dynamodb';
import { backfillExportFile } from '../../src/backfill/export-file.js';
import { timedCpu } from './cpu.js';
import { generateRecords } from './events.js';
import { readingPipeline } from './reading-pipeline.js';

export const BUCKET = 'backfill-bench';

/** `count` seeded ~1 KB items with every attribute type, each with its own `pk`. */
export function benchItems(count: number, seed: number) {
  return generateRecords({ seed, count })
    .map((r) => r.dynamodb.NewImage ?? r.dynamodb.OldImage!)
    .map((image, i) => ({ ...image, pk: { S: `item-${seed}-${i}` } }));
}

/** A data file as an export writes it (`{"Item":…}` lines, gzip); its manifest line's md5Checksum and itemCount. */
export interface PutDataFile {
  readonly key: string;
  readonly gzipBytes: number;
  readonly md5Checksum: string;
  readonly itemCount: number;
}

export async function putDataFile(
  s3: S3Client,
  key: string,
  count: number,
  seed: number,
): Promise<PutDataFile> {
  const body = gzipSync(
    benchItems(count, seed)
      .map((Item) => `${JSON.stringify({ Item })}\n`)
      .join(''),
  );
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
  return {
    key,
    gzipBytes: body.length,
    md5Checksum: createHash('md5').update(body).digest('base64'),
    itemCount: count,
  };
}

/** backfillExportFile over the files, md5Checksum and itemCount given as a manifest gives them. */
export async function backfillFiles(s3: S3Client, files: readonly PutDataFile[]): Promise<number> {
  const { pipeline, touched } = readingPipeline('insert');
  for (const file of files)
    await backfillExportFile(
      pipeline,
      {
        bucket: BUCKET,
        key: file.key,
        exportType: 'FULL_EXPORT',
        exportTime: Date.now(),
        keyAttributes: ['pk'],
        md5Checksum: file.md5Checksum,
        itemCount: file.itemCount,
      },
      { client: s3 },
    );
  return touched() / 2;
}

async function openText(
  s3: S3Client,
  key: string,
  tap?: (chunk: Buffer) => void,
): Promise<AsyncIterable<string>> {
  const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  const body = out.Body as Readable;
  if (tap !== undefined) body.on('data', tap);
  const text = pipe(body, createGunzip(), () => undefined);
  text.setEncoding('utf8');
  return text as AsyncIterable<string>;
}

/** The plain hand loop: GetObject → gunzip → split → JSON.parse → util-dynamodb unmarshall; checks nothing. */
export async function handLoop(s3: S3Client, files: readonly PutDataFile[]): Promise<number> {
  let n = 0;
  for (const file of files) {
    let rest = '';
    for await (const chunk of await openText(s3, file.key)) {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const item = sdkUnmarshall(JSON.parse(line).Item);
        if (item.pk !== undefined) n++;
      }
    }
  }
  return n;
}

/**
 * The hand loop holding the file to what the trust boundary asks of it (docs/trust-boundaries.md):
 * the MD5 of the compressed bytes and the item count compared with the manifest's, a line-length
 * bound and an inflate-ratio bound. What the backfill checks that this loop does not: every
 * AttributeValue (util-dynamodb converts what it is given), exact numbers, the key under data/.
 */
export async function checkedHandLoop(s3: S3Client, files: readonly PutDataFile[]): Promise<number> {
  const maxLine = 13 * 1024 * 1024;
  let n = 0;
  for (const file of files) {
    const md5 = createHash('md5');
    let compressed = 0;
    let inflated = 0;
    let items = 0;
    let rest = '';
    const text = await openText(s3, file.key, (chunk) => {
      md5.update(chunk);
      compressed += chunk.length;
    });
    for await (const chunk of text) {
      inflated += chunk.length;
      if (inflated > 16 * 1024 * 1024 && inflated > 250 * compressed) throw new Error('inflates too far');
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      if (rest.length > maxLine) throw new Error('line too long');
      for (const line of lines) {
        if (line.length > maxLine) throw new Error('line too long');
        if (line === '') continue;
        if (++items > file.itemCount) throw new Error('too many items');
        const item = sdkUnmarshall(JSON.parse(line).Item);
        if (item.pk !== undefined) n++;
      }
    }
    if (md5.digest('base64') !== file.md5Checksum || items !== file.itemCount)
      throw new Error('not the manifest’s file');
  }
  return n;
}

/** Runs `run` and returns the items it counted with the process CPU time it took. */
export async function timed(run: () => Promise<number>): Promise<{ items: number; cpu: number }> {
  const { count, cpu } = await timedCpu(run);
  return { items: count, cpu };
}
