// The soaks' side of the local S3 server: their client, and the count of the server's own errors.
import type { IncomingMessage } from 'node:http';
import type { S3Client } from '@aws-sdk/client-s3';
import { localS3Client } from '../../src/local/servers/local-s3-client.js';
import type { S3ServerMiddleware } from '../../src/local/servers/s3-server.js';
import { SinkRetryStrategy } from '../../src/s3.js';

/** A client of the local server retrying as the sinks' own clients do (SinkRetryStrategy). */
export function soakS3Client(endpoint: string, maxAttempts: number): S3Client {
  return localS3Client(endpoint, { maxAttempts, retryStrategy: new SinkRetryStrategy(maxAttempts) });
}

type Context = Parameters<S3ServerMiddleware>[0];

/**
 * Passes a request on to the local S3 server and records each 5xx it answers of its own accord:
 * a request S3 would have accepted. Not counted: s3rver's thrown S3 errors below 500 (404, 412),
 * which Koa answers, and requests whose client hung up before the answer (an upload aborted at
 * the invocation's deadline), which S3 answers to no one either.
 */
export async function passOnCountingErrors(
  ctx: Context,
  next: () => Promise<void>,
  errors: string[],
): Promise<void> {
  // Taken first: the server replaces ctx.req with the spooled body.
  const socket = (ctx as unknown as { req?: IncomingMessage }).req?.socket;
  try {
    await next();
  } catch (error) {
    const status = (error as { status?: unknown }).status;
    if ((typeof status !== 'number' || status >= 500) && !socket?.destroyed)
      errors.push(`${ctx.method} ${status ?? 500}: ${String(error)}`);
    throw error;
  }
  if (ctx.status >= 500 && !socket?.destroyed) errors.push(`${ctx.method} ${ctx.status}`);
}
