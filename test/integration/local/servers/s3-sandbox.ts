// A local S3 server in a sandbox: its directory and a sibling canary folder under one temporary
// root, so a test sees any file a request wrote (or removed) outside the server's directory.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { type S3Server, startS3Server } from '../../../../src/local/servers/s3-server.js';

export interface S3Sandbox {
  readonly server: S3Server;
  readonly root: string;
  /**
   * Every path under the root but inside the server's directory, sorted, each with its mode and,
   * for a file, its size and a hash of its bytes: a request that overwrote, truncated or chmod-ed
   * a file outside shows as a change, not only one that made or removed a path.
   */
  outside(): Promise<string[]>;
  stop(): Promise<void>;
}

async function walk(folder: string, root: string, out: string[]): Promise<void> {
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    const stats = await stat(path);
    const content = entry.isFile()
      ? ` ${stats.size} ${createHash('sha256')
          .update(await readFile(path))
          .digest('hex')}`
      : '';
    out.push(`${relative(root, path)} ${(stats.mode & 0o7777).toString(8)}${content}`);
    if (entry.isDirectory()) await walk(path, root, out);
  }
}

export async function startS3Sandbox(buckets: string[] = []): Promise<S3Sandbox> {
  const root = await mkdtemp(join(tmpdir(), 'tidewater-s3-sandbox-'));
  const directory = join(root, 'server');
  await mkdir(join(root, 'canary', 'inner'), { recursive: true });
  await writeFile(join(root, 'canary', 'inner', 'file'), 'canary');
  const server = await startS3Server({ directory, buckets });
  return {
    server,
    root,
    async outside() {
      const all: string[] = [];
      await walk(root, root, all);
      return all.filter((line) => !line.startsWith('server ') && !line.startsWith('server/')).sort();
    },
    async stop() {
      await server.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export interface RawAnswer {
  status: number;
  body: string;
}

/**
 * One raw HTTP request (unsigned: s3rver serves anonymous requests). A request the server drops
 * answers status 0; one unanswered after `timeoutMs` is abandoned with status -1.
 */
export function rawRequest(
  endpoint: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  payload: string | Buffer,
  timeoutMs = 10_000,
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    // Host and port apart from the path: a URL would normalise `/.` and `/%2E%2E/` away.
    const { hostname, port } = new URL(endpoint);
    const req = request({ hostname, port, path, method, headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', () => resolve({ status: 0, body: '' }));
    });
    req.on('timeout', () => {
      req.destroy();
      resolve({ status: -1, body: '' });
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end(payload);
  });
}

/** The `<Code>` of an S3 error document. */
export function errorCodeOf(body: string): string | undefined {
  return /<Code>([^<]*)<\/Code>/.exec(body)?.[1];
}
