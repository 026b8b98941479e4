// What the local S3 server's own middleware (the fence, S3's semantics, DeleteObjects) sees of a
// request: Koa's context as s3rver builds it, its store, the request's bucket and key, and S3's
// error answer.
import type { Readable } from 'node:stream';
import type { PatchableStore } from './s3-store.js';
import { escapeXml } from './s3-xml.js';

/** The part of Koa's context the middleware may use. */
export interface S3ServerRequestContext {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  status: number;
  body: unknown;
  set(header: string, value: string): void;
}

/** Koa's context as the S3 semantics middleware uses it (s3rver is a Koa application). */
export interface S3rverContext extends S3ServerRequestContext {
  /** Koa parses the query string on read and rewrites it on assignment. */
  query: Record<string, string | string[] | undefined>;
  /** The request body stream s3rver's handlers read; replaced once the body is spooled or checked. */
  req: Readable;
  remove(header: string): void;
}

export type S3rverMiddleware = (ctx: S3rverContext, next: () => Promise<void>) => Promise<void> | void;

/** The methods of s3rver's FilesystemStore used here (its key layout is s3-store.ts's). */
export interface S3rverStore extends PatchableStore {
  existsObject(bucket: string, key: string): Promise<boolean>;
  getBucket(bucket: string): Promise<unknown>;
}

/**
 * `{bucket, key}` of a path-style path (`key` undefined for the bucket itself); undefined for the
 * service root; 'malformed' for an escape decodeURIComponent refuses.
 */
export function requestTarget(
  path: string,
): { bucket: string; key: string | undefined } | undefined | 'malformed' {
  const slash = path.indexOf('/', 1);
  try {
    const bucket = decodeURIComponent(path.slice(1, slash < 0 ? undefined : slash));
    if (bucket === '') return undefined;
    const key =
      slash < 0 || slash === path.length - 1 ? undefined : decodeURIComponent(path.slice(slash + 1));
    return { bucket, key };
  } catch {
    return 'malformed';
  }
}

export function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Answers with S3's error document. */
export function answerError(
  ctx: S3rverContext,
  status: number,
  code: string,
  message: string,
  detail: Record<string, string> = {},
): void {
  const extra = Object.entries(detail)
    .map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`)
    .join('');
  ctx.status = status;
  ctx.set('Content-Type', 'application/xml');
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message>${extra}</Error>`;
}
