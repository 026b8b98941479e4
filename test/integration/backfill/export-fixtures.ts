import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/** A manifest-files.json line as a real export writes it: the body's item count and MD5 (base64). */
export function manifestLine(key: string, body: Uint8Array): Record<string, unknown> {
  return {
    itemCount: itemsIn(gunzipOrEmpty(body)),
    md5Checksum: createHash('md5').update(body).digest('base64'),
    etag: createHash('md5').update(body).digest('hex'),
    dataFileS3Key: key,
  };
}

/** Lines that are not empty, counted without making a string of each (a test's bomb has millions). */
function itemsIn(text: Uint8Array): number {
  let items = 0;
  let start = 0;
  for (let end = text.indexOf(10); end !== -1; end = text.indexOf(10, start)) {
    if (end > start) items++;
    start = end + 1;
  }
  return start < text.length ? items + 1 : items;
}

// A truncated or non-gzip body (a test's damaged file) counts no items.
function gunzipOrEmpty(body: Uint8Array): Uint8Array {
  try {
    return gunzipSync(body);
  } catch {
    return new Uint8Array();
  }
}

/**
 * An export written by hand (for inputs DynamoDB never writes): data file bodies as given, the
 * manifest lines as a real export writes them unless `lines` rewrites them (it gets each line and
 * its file's index), and the summary's itemCount the lines' sum unless `summary` says otherwise.
 */
export async function putExport(
  s3: S3Client,
  bucket: string,
  bodies: readonly Uint8Array[],
  summary: Record<string, unknown> = {},
  lines: (line: Record<string, unknown>, index: number) => Record<string, unknown> = (l) => l,
): Promise<{ prefix: string; keys: string[] }> {
  const prefix = `hand/AWSDynamoDB/${Date.now()}-${Math.random().toString(16).slice(2, 10)}`;
  const keys = bodies.map((_, i) => `${prefix}/data/file${i}.json.gz`);
  for (let i = 0; i < bodies.length; i++)
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: keys[i], Body: bodies[i] }));
  const manifestFilesKey = `${prefix}/manifest-files.json`;
  const entries = bodies.map((body, i) => lines(manifestLine(keys[i]!, body), i));
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: manifestFilesKey,
      Body: entries.map((e) => `${JSON.stringify(e)}\n`).join(''),
    }),
  );
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: `${prefix}/manifest-summary.json`,
      Body: JSON.stringify({
        exportArn: `arn:aws:dynamodb:us-east-1:000000000000:table/hand/export/${prefix.split('/').pop()}`,
        exportTime: '2026-01-02T03:04:05.000Z',
        tableArn: 'arn:aws:dynamodb:us-east-1:000000000000:table/hand',
        manifestFilesS3Key: manifestFilesKey,
        itemCount: entries.reduce((n, e) => n + (typeof e.itemCount === 'number' ? e.itemCount : 0), 0),
        outputFormat: 'DYNAMODB_JSON',
        exportType: 'FULL_EXPORT',
        ...summary,
      }),
    }),
  );
  return { prefix, keys };
}

export function gzLines(lines: readonly string[]): Uint8Array {
  return gzipSync(lines.map((l) => `${l}\n`).join(''));
}
