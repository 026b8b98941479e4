import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalServerStartError } from './errors.js';
import { freePort } from './free-port.js';

export interface S3ServerOptions {
  port?: number;
  /** Where objects are stored; a fresh temporary directory (removed on stop) when omitted. */
  directory?: string;
  /** Buckets to create at start. */
  buckets?: string[];
  /**
   * Koa-style middleware run before s3rver's own handlers. Tests use it to observe request
   * headers s3rver does not persist (SSE) and to inject faults (5xx, throttling).
   */
  middleware?: S3ServerMiddleware[];
}

export type S3ServerMiddleware = (
  ctx: S3ServerRequestContext,
  next: () => Promise<void>,
) => Promise<void> | void;

/** The part of Koa's context the middleware may use. */
export interface S3ServerRequestContext {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  status: number;
  body: unknown;
  set(header: string, value: string): void;
}

export interface S3Server {
  readonly endpoint: string;
  readonly port: number;
  readonly directory: string;
  stop(): Promise<void>;
}

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
  use(middleware: S3ServerMiddleware): void;
  middleware: S3ServerMiddleware[];
}

/** Starts s3rver (an optional peer dependency) on loopback. Use path-style addressing against it. */
export async function startS3Server(options: S3ServerOptions = {}): Promise<S3Server> {
  const require = createRequire(import.meta.url);
  let S3rver: new (options: object) => S3rverInstance;
  try {
    S3rver = require('s3rver');
  } catch {
    throw new LocalServerStartError('S3 server', 'the package `s3rver` is not installed (npm i -D s3rver)');
  }
  const ownsDirectory = options.directory === undefined;
  const directory = options.directory ?? (await mkdtemp(join(tmpdir(), 'tidewater-s3-')));
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const server = new S3rver({
      port,
      address: '127.0.0.1',
      directory,
      silent: true,
      configureBuckets: (options.buckets ?? []).map((name) => ({ name })),
    });
    // Run the caller's middleware first: s3rver's router would otherwise answer before it.
    for (const mw of options.middleware ?? []) server.middleware.unshift(mw);
    try {
      await server.run();
    } catch (error) {
      if (options.port === undefined && attempt < 3 && (error as NodeJS.ErrnoException).code === 'EADDRINUSE')
        continue;
      throw new LocalServerStartError('S3 server', String(error));
    }
    return {
      endpoint: `http://127.0.0.1:${port}`,
      port,
      directory,
      async stop() {
        await server.close().catch(() => undefined);
        if (ownsDirectory) await rm(directory, { recursive: true, force: true });
      },
    };
  }
}
