import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { localS3Client } from '../../../src/local/servers/local-s3-client.js';
import {
  type S3Server,
  type S3ServerMiddleware,
  startS3Server,
} from '../../../src/local/servers/s3-server.js';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

/** An S3 client for a local s3rver, configured like test/support/aws.ts. */
export function s3ClientFor(endpoint: string, extra: { maxAttempts?: number } = {}): S3Client {
  return localS3Client(endpoint, { retryMode: 'standard', ...extra });
}

/**
 * A private s3rver whose middleware records every request and may answer some itself
 * (`fault` returns a status and S3 error code to send instead of passing the request on).
 */
export async function startRecordingS3(
  fault?: (req: RecordedRequest, index: number) => { status: number; code: string } | undefined,
): Promise<{ server: S3Server; requests: RecordedRequest[] }> {
  const requests: RecordedRequest[] = [];
  const middleware: S3ServerMiddleware = async (ctx, next) => {
    const req = { method: ctx.method, path: decodeURIComponent(ctx.path), headers: { ...ctx.headers } };
    requests.push(req);
    const answer = fault?.(req, requests.length - 1);
    if (answer !== undefined) {
      ctx.status = answer.status;
      ctx.set('Content-Type', 'application/xml');
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${answer.code}</Code><Message>injected</Message><RequestId>test</RequestId></Error>`;
      return;
    }
    await next();
  };
  const server = await startS3Server({ middleware: [middleware] });
  return { server, requests };
}

export async function listKeys(client: S3Client, bucket: string, prefix?: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const item of page.Contents ?? []) if (item.Key) keys.push(item.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}
