import { gzipSync } from 'node:zlib';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/** An export written by hand (for inputs DynamoDB never writes): data file bodies as given. */
export async function putExport(
  s3: S3Client,
  bucket: string,
  bodies: readonly Uint8Array[],
  summary: Record<string, unknown> = {},
): Promise<{ prefix: string; keys: string[] }> {
  const prefix = `hand/AWSDynamoDB/${Date.now()}-${Math.random().toString(16).slice(2, 10)}`;
  const keys = bodies.map((_, i) => `${prefix}/data/file${i}.json.gz`);
  for (let i = 0; i < bodies.length; i++)
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: keys[i], Body: bodies[i] }));
  const manifestFilesKey = `${prefix}/manifest-files.json`;
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: manifestFilesKey,
      Body: keys.map((k) => `${JSON.stringify({ itemCount: 1, dataFileS3Key: k })}\n`).join(''),
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
