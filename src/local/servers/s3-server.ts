import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { defineOptions } from '../../core/index.js';
import { OWNER_ONLY } from '../../core/write-file-atomic.js';
import { LocalServerStartError } from './errors.js';
import { freePort } from './free-port.js';
import {
  answerError,
  first,
  requestTarget,
  type S3rverContext,
  type S3rverMiddleware,
  type S3rverStore,
  type S3ServerRequestContext,
} from './s3-context.js';
import { deleteObjects } from './s3-delete-objects.js';
import { s3Fence } from './s3-fence.js';
import { KeyedQueue } from './s3-keyed-queue.js';
import {
  classOf,
  readJson,
  recordClass,
  STORAGE_CLASS_HEADER,
  storedClass,
  storedMetadata,
} from './s3-metadata.js';
import {
  invalidObjectState,
  isUnreadable,
  type RestoreSettings,
  restoreHeader,
  restoreObject,
} from './s3-restore.js';
import { patchStore } from './s3-store.js';

export type { S3ServerRequestContext } from './s3-context.js';

/** Options of startS3Server: port, storage directory, buckets to create, middleware. */
export interface S3ServerOptions {
  port?: number;
  /** Where objects are stored; a fresh temporary directory (removed on stop) when omitted. */
  directory?: string;
  /** Buckets to create at start. */
  buckets?: string[];
  /**
   * Koa-style middleware run before s3rver's own handlers and before this module's S3 behaviour
   * (storage classes, conditional creates), so it sees each request as the client sent it. Tests
   * use it to observe request headers s3rver does not persist (SSE) and to inject faults (5xx,
   * throttling).
   */
  middleware?: S3ServerMiddleware[];
  /**
   * How long a RestoreObject of a GLACIER / DEEP_ARCHIVE object takes before GetObject serves it.
   * Default 100 ms (S3 takes minutes to hours by tier).
   */
  restoreDelayMs?: number;
  /** The length of one of RestoreObject's Days, after which the restored copy expires. Default one day. */
  restoreDayMs?: number;
  /**
   * The clock restores are timed by, epoch milliseconds. Default `Date.now`. A test that moves it
   * sees a restore in progress, done, then expired, without waiting.
   */
  clock?: () => number;
}

/** A hook in front of the local S3 server's requests (tests inject faults with it). */
export type S3ServerMiddleware = (
  ctx: S3ServerRequestContext,
  next: () => Promise<void>,
) => Promise<void> | void;

/** A running local S3 server: its endpoint, storage directory and stop(). */
export interface S3Server {
  readonly endpoint: string;
  readonly port: number;
  readonly directory: string;
  stop(): Promise<void>;
}

/**
 * Every value of the S3 API's StorageClass enumeration (x-amz-storage-class on PutObject,
 * CreateMultipartUpload and CopyObject), as in the API model of @aws-sdk/client-s3 3.1169
 * (a test compares them). s3rver 3.7 knows only the first eight and answers the rest
 * InvalidStorageClass.
 */
export const S3_STORAGE_CLASSES = [
  'STANDARD',
  'REDUCED_REDUNDANCY',
  'STANDARD_IA',
  'ONEZONE_IA',
  'INTELLIGENT_TIERING',
  'GLACIER',
  'DEEP_ARCHIVE',
  'OUTPOSTS',
  'GLACIER_IR',
  'SNOW',
  'EXPRESS_ONEZONE',
  'FSX_OPENZFS',
  'FSX_ONTAP',
  'AWS_BACKUP_WARM',
  'AWS_BACKUP_LOW_COST_WARM',
] as const;

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
  middleware: S3rverMiddleware[];
  store: S3rverStore;
}

/** The rules local-aws.ts shares for the options it passes on. */
export const BUCKETS_OPTION = {
  kind: 'custom',
  expected: 'a list of bucket names',
  check: Array.isArray,
} as const;
export const MIDDLEWARE_OPTION = {
  kind: 'custom',
  expected: 'a list of middleware functions',
  check: Array.isArray,
} as const;

const readOptions = defineOptions<S3ServerOptions>()('startS3Server', {
  port: { kind: 'integer', min: 0, max: 65_535 },
  directory: { kind: 'nonEmptyString' },
  buckets: BUCKETS_OPTION,
  middleware: MIDDLEWARE_OPTION,
  restoreDelayMs: { kind: 'integer', min: 0, max: 2_147_483_647, default: 100 },
  restoreDayMs: { kind: 'integer', min: 1, max: 86_400_000, default: 86_400_000 },
  clock: { kind: 'function' },
});

/** Starts s3rver (an optional peer dependency) on loopback. Use path-style addressing against it. */
export async function startS3Server(input: S3ServerOptions = {}): Promise<S3Server> {
  const options = readOptions(input);
  const require = createRequire(import.meta.url);
  let S3rver: new (options: object) => S3rverInstance;
  try {
    S3rver = require('s3rver');
  } catch {
    throw new LocalServerStartError('S3 server', 'the package `s3rver` is not installed (npm i -D s3rver)');
  }
  const ownsDirectory = options.directory === undefined;
  // Objects are items: the directory is its owner's only (mkdtemp's 0700; a given one made so).
  const directory = options.directory ?? (await mkdtemp(join(tmpdir(), 'tidewater-s3-')));
  if (!ownsDirectory) await mkdir(directory, { recursive: true, mode: 0o700 });
  // Request bodies wait here until complete, outside the store: s3rver never sees an aborted upload.
  const spoolDirectory = await mkdtemp(join(tmpdir(), 'tidewater-s3-spool-'));
  const removeOwnFiles = async () => {
    await rm(spoolDirectory, { recursive: true, force: true });
    if (ownsDirectory) await rm(directory, { recursive: true, force: true });
  };
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const server = new S3rver({
      port,
      address: '127.0.0.1',
      directory,
      silent: true,
      configureBuckets: (options.buckets ?? []).map((name) => ({ name })),
    });
    // After s3rver's virtual-host rewrite, so the path always starts with the bucket.
    const router = server.middleware.findIndex((mw) => 'router' in mw);
    if (router < 0) {
      await removeOwnFiles();
      throw new LocalServerStartError(
        'S3 server',
        'this s3rver has no router middleware (tidewater needs 3.7)',
      );
    }
    patchStore(server.store);
    const restores: RestoreSettings = {
      delayMs: options.restoreDelayMs,
      dayMs: options.restoreDayMs,
      now: options.clock ?? Date.now,
    };
    server.middleware.splice(
      router,
      0,
      s3Fence(server.store),
      s3Semantics(server.store, spoolDirectory, restores),
    );
    // Run the caller's middleware first: s3rver's router would otherwise answer before it.
    for (const mw of options.middleware ?? []) server.middleware.unshift(mw);
    try {
      await server.run();
    } catch (error) {
      if (options.port === undefined && attempt < 3 && (error as NodeJS.ErrnoException).code === 'EADDRINUSE')
        continue;
      await removeOwnFiles();
      throw new LocalServerStartError('S3 server', String(error));
    }
    return {
      endpoint: `http://127.0.0.1:${port}`,
      port,
      directory,
      async stop() {
        await server.close().catch(() => undefined);
        await removeOwnFiles();
      },
    };
  }
}

// ---------------------------------------------------------------------------------------------
// What S3 does and s3rver does not: storage classes, conditional creates, aborted uploads.
// ---------------------------------------------------------------------------------------------

/** Carries the class from CreateMultipartUpload to completion in the upload's saved headers. */
const UPLOAD_CLASS_HEADER = 'x-tidewater-storage-class';
const KNOWN_CLASSES: ReadonlySet<string> = new Set(S3_STORAGE_CLASSES);
/** s3rver 3.7's own list (S3Object.STORAGE_CLASSES), the enum's first eight: it refuses any other class. */
const S3RVER_CLASSES: ReadonlySet<string> = new Set(S3_STORAGE_CLASSES.slice(0, 8));

/** Query parameters that name a sub-resource: such a request is no plain object or bucket request. */
const SUBRESOURCES: ReadonlySet<string> = new Set([
  'accelerate',
  'acl',
  'analytics',
  'attributes',
  'cors',
  'delete',
  'encryption',
  'intelligent-tiering',
  'inventory',
  'legal-hold',
  'lifecycle',
  'location',
  'logging',
  'metrics',
  'notification',
  'object-lock',
  'ownershipControls',
  'policy',
  'policyStatus',
  'publicAccessBlock',
  'replication',
  'requestPayment',
  'restore',
  'retention',
  'select',
  'tagging',
  'torrent',
  'uploadId',
  'uploads',
  'versioning',
  'versions',
  'website',
]);

/**
 * Middleware placed just before s3rver's router. It keeps each object's storage class itself
 * (s3rver knows eight and lists every object as STANDARD), spools PutObject bodies so an aborted
 * upload stores nothing, and serialises writes per key so `If-None-Match: *` is decided when the
 * write completes.
 */
function s3Semantics(
  store: S3rverStore,
  spoolDirectory: string,
  restores: RestoreSettings,
): S3rverMiddleware {
  const writes = new KeyedQueue();

  async function putObject(ctx: S3rverContext, next: () => Promise<void>, bucket: string, key: string) {
    const storageClass = takeStorageClass(ctx);
    if (storageClass instanceof InvalidStorageClass) return refuse(ctx, storageClass);
    const spool = join(spoolDirectory, randomUUID());
    // The key's turn is taken on arrival, before the body is spooled, as S3 orders requests: a
    // DELETE sent after this PUT (a client that gave up on it and retracts) runs after it.
    await writes.run(`${bucket}/${key}`, async () => {
      try {
        if (!(await spoolBody(ctx, spool))) return;
        const body = createReadStream(spool);
        // s3rver listens for errors only once it reads the body; a request it answers without
        // reading (or a spool removed by stop()) must not leave an error event nobody hears.
        body.on('error', () => undefined);
        ctx.req = body;
        if (createOnly(ctx) && (await store.existsObject(bucket, key))) return preconditionFailed(ctx);
        await next();
        if (succeeded(ctx)) await recordClass(store, bucket, key, storageClass ?? 'STANDARD');
      } finally {
        await rm(spool, { force: true });
      }
    });
  }

  async function copyObject(ctx: S3rverContext, next: () => Promise<void>, bucket: string, key: string) {
    const storageClass = takeStorageClass(ctx);
    if (storageClass instanceof InvalidStorageClass) return refuse(ctx, storageClass);
    const source = copySource(ctx.headers['x-amz-copy-source']);
    const onto = source?.bucket === bucket && source.key === key;
    const replace = first(ctx.headers['x-amz-metadata-directive']) === 'REPLACE';
    await writes.run(`${bucket}/${key}`, async () => {
      // S3 copies an archived object only once restored (a copy onto itself in STANDARD is how
      // a restored object is kept for good).
      const sourceMetadata = source && (await storedMetadata(store, source.bucket, source.key));
      if (isUnreadable(sourceMetadata, restores.now())) {
        ctx.req.resume();
        return invalidObjectState(ctx, classOf(sourceMetadata));
      }
      // S3 changes a stored object's class by copying it onto itself; s3rver refuses every copy
      // onto itself that does not replace the metadata.
      if (onto && !replace && storageClass !== undefined && (await store.existsObject(bucket, key))) {
        const now = new Date();
        await utimes(store.getResourcePath(bucket, key, 'object'), now, now);
        await recordClass(store, bucket, key, storageClass);
        const metadata = await store.getMetadata(bucket, key);
        ctx.status = 200;
        ctx.body = {
          CopyObjectResult: {
            LastModified: new Date(String(metadata['last-modified'])).toISOString(),
            ETag: metadata.etag,
          },
        };
        return;
      }
      await next();
      // A copy is STANDARD unless the request names a class: the source's class does not carry over.
      if (succeeded(ctx)) await recordClass(store, bucket, key, storageClass ?? 'STANDARD');
    });
  }

  function createMultipartUpload(ctx: S3rverContext, next: () => Promise<void>) {
    const storageClass = takeStorageClass(ctx);
    if (storageClass instanceof InvalidStorageClass) return refuse(ctx, storageClass);
    // s3rver saves the request headers with the upload and reads them back at completion.
    delete ctx.headers[UPLOAD_CLASS_HEADER];
    if (storageClass !== undefined) ctx.headers[UPLOAD_CLASS_HEADER] = storageClass;
    return next();
  }

  async function completeMultipartUpload(
    ctx: S3rverContext,
    next: () => Promise<void>,
    bucket: string,
    key: string,
  ) {
    // Read before s3rver removes the upload's directory on success.
    const storageClass = await uploadClass(store, bucket, first(ctx.query.uploadId));
    await writes.run(`${bucket}/${key}`, async () => {
      if (createOnly(ctx) && (await store.existsObject(bucket, key))) return preconditionFailed(ctx);
      await next();
      if (succeeded(ctx)) await recordClass(store, bucket, key, storageClass);
    });
  }

  async function readObject(ctx: S3rverContext, next: () => Promise<void>, bucket: string, key: string) {
    const metadata = await storedMetadata(store, bucket, key);
    const now = restores.now();
    // GetObject of an archived object not restored is refused before its body is opened;
    // HeadObject answers (and tells the restore's state).
    if (ctx.method === 'GET' && isUnreadable(metadata, now))
      return invalidObjectState(ctx, classOf(metadata));
    await next();
    if (ctx.status !== 200 && ctx.status !== 206) return;
    // S3 sends the header for every class but STANDARD.
    const storageClass = classOf(metadata);
    ctx.remove(STORAGE_CLASS_HEADER);
    if (storageClass !== 'STANDARD') ctx.set(STORAGE_CLASS_HEADER, storageClass);
    const restore = restoreHeader(metadata, now);
    if (restore !== undefined) ctx.set('x-amz-restore', restore);
  }

  async function listObjects(ctx: S3rverContext, next: () => Promise<void>, bucket: string) {
    const v2 = first(ctx.query['list-type']) === '2' ? listV2AsV1(ctx) : undefined;
    if (v2 instanceof Error) return answerError(ctx, 400, 'InvalidArgument', v2.message);
    await next();
    if (v2 !== undefined) bodyAsV2(ctx, v2);
    // s3rver lists every object as STANDARD. The body is still an object here: s3rver turns it
    // into XML in a middleware that runs around this one.
    const listing = ctx.body as { ListBucketResult?: { Contents?: { Key: string; StorageClass: string }[] } };
    const contents = listing?.ListBucketResult?.Contents;
    if (!Array.isArray(contents)) return;
    await Promise.all(
      contents.map(async (entry) => {
        entry.StorageClass = await storedClass(store, bucket, String(entry.Key));
      }),
    );
  }

  return async (ctx, next) => {
    const target = requestTarget(ctx.path);
    if (target === undefined || target === 'malformed') return next(); // the fence answered malformed ones
    const { bucket, key } = target;
    const subresource = Object.keys(ctx.query).find((name) => SUBRESOURCES.has(name));
    if (key === undefined) {
      if (ctx.method === 'POST' && ctx.query.delete !== undefined)
        return deleteObjects(ctx, store, writes, bucket);
      return ctx.method === 'GET' && subresource === undefined ? listObjects(ctx, next, bucket) : next();
    }
    switch (`${ctx.method} ${subresource ?? ''}`) {
      case 'PUT ':
        return hasCopySource(ctx) ? copyObject(ctx, next, bucket, key) : putObject(ctx, next, bucket, key);
      case 'POST uploads':
        return createMultipartUpload(ctx, next);
      case 'POST uploadId':
        return completeMultipartUpload(ctx, next, bucket, key);
      case 'POST restore':
        return restoreObject(ctx, store, writes, { bucket, key }, restores);
      case 'DELETE ':
        return writes.run(`${bucket}/${key}`, next);
      case 'GET ':
      case 'HEAD ':
        // In the key's turn: a read never meets a PUT or DELETE of the key half done.
        return writes.run(`${bucket}/${key}`, () => readObject(ctx, next, bucket, key));
      default:
        return next();
    }
  };
}

/** What a ListObjectsV2 request asked for that its V1 form (below) does not carry. */
interface ListV2Request {
  continuationToken: string | undefined;
  startAfter: string | undefined;
  fetchOwner: boolean;
}

/**
 * s3rver's ListObjectsV2 makes its continuation tokens with DES, which OpenSSL 3 (Node 17+) has
 * only in its legacy provider: every truncated V2 listing, and every request carrying a token,
 * failed with `digital envelope routines::unsupported`. The request is answered as a V1 listing
 * from the same position (a marker) and the answer reshaped into V2's (bodyAsV2), with a token
 * that is the last key, base64url-encoded. Error for a token this server did not issue.
 */
function listV2AsV1(ctx: S3rverContext): ListV2Request | Error {
  const query = { ...ctx.query };
  const continuationToken = first(query['continuation-token']);
  const startAfter = first(query['start-after']);
  let marker = startAfter;
  if (continuationToken !== undefined && continuationToken !== '') {
    const decoded = Buffer.from(continuationToken, 'base64url').toString('utf8');
    if (!decoded.startsWith(TOKEN_TAG)) return new Error('The continuation token provided is incorrect');
    marker = decoded.slice(TOKEN_TAG.length);
  }
  const fetchOwner = first(query['fetch-owner']) === 'true';
  for (const name of ['list-type', 'continuation-token', 'start-after', 'fetch-owner']) delete query[name];
  if (marker !== undefined) query.marker = marker;
  ctx.query = query;
  return { continuationToken, startAfter, fetchOwner };
}

const TOKEN_TAG = 'tidewater-list:';

function bodyAsV2(ctx: S3rverContext, request: ListV2Request): void {
  const listing = (ctx.body as { ListBucketResult?: Record<string, unknown> } | undefined)?.ListBucketResult;
  if (listing === undefined) return;
  const contents = (listing.Contents ?? []) as { Key: string; Owner?: unknown }[];
  const { Marker: _marker, NextMarker: _next, Contents, CommonPrefixes, ...rest } = listing;
  const last = contents.at(-1)?.Key;
  if (!request.fetchOwner) for (const entry of contents) delete entry.Owner;
  (ctx.body as { ListBucketResult: Record<string, unknown> }).ListBucketResult = {
    ...rest,
    ...(request.continuationToken ? { ContinuationToken: request.continuationToken } : {}),
    ...(request.continuationToken === undefined && request.startAfter !== undefined
      ? { StartAfter: request.startAfter }
      : {}),
    NextContinuationToken:
      listing.IsTruncated === true && last !== undefined
        ? Buffer.from(`${TOKEN_TAG}${last}`).toString('base64url')
        : undefined,
    KeyCount: contents.length + ((CommonPrefixes as unknown[] | undefined)?.length ?? 0),
    Contents,
    CommonPrefixes,
  };
}

function hasCopySource(ctx: S3rverContext): boolean {
  return ctx.headers['x-amz-copy-source'] !== undefined;
}

/** `x-amz-copy-source`: `[/]bucket/key[?versionId=…]`, URL-encoded. */
function copySource(header: string | string[] | undefined): { bucket: string; key: string } | undefined {
  const value = first(header)?.replace(/^\//, '').replace(/\?.*$/, '');
  const slash = value?.indexOf('/') ?? -1;
  if (value === undefined || slash < 0) return undefined;
  try {
    return {
      bucket: decodeURIComponent(value.slice(0, slash)),
      key: decodeURIComponent(value.slice(slash + 1)),
    };
  } catch {
    return undefined;
  }
}

/**
 * The requested storage class; an InvalidStorageClass when S3 would refuse it. A presigned URL
 * carries it in the query, which s3rver folds into the headers. A class s3rver does not know is
 * removed from the request, so s3rver never refuses it. One it knows stays, so a SigV2
 * signature (s3rver checks those) over the header still matches.
 */
function takeStorageClass(ctx: S3rverContext): string | undefined | InvalidStorageClass {
  const inQuery = Object.keys(ctx.query).filter((name) => name.toLowerCase() === STORAGE_CLASS_HEADER);
  let requested = first(ctx.headers[STORAGE_CLASS_HEADER]);
  for (const name of inQuery) requested = first(ctx.query[name]);
  if (requested === undefined) return undefined;
  if (!KNOWN_CLASSES.has(requested)) return new InvalidStorageClass(requested);
  if (!S3RVER_CLASSES.has(requested)) {
    delete ctx.headers[STORAGE_CLASS_HEADER];
    if (inQuery.length > 0) {
      const query = { ...ctx.query };
      for (const name of inQuery) delete query[name];
      ctx.query = query;
    }
  }
  return requested;
}

class InvalidStorageClass extends Error {
  override readonly name = 'InvalidStorageClass';
  constructor(readonly requested: string) {
    super('The storage class you specified is not valid');
  }
}

function refuse(ctx: S3rverContext, error: InvalidStorageClass): void {
  ctx.req.resume(); // the body is not wanted; let the client finish sending it
  answerError(ctx, 400, error.name, error.message, { StorageClassRequested: error.requested });
}

/** `If-None-Match: *`: write only if the key does not exist (S3's conditional create). */
function createOnly(ctx: S3rverContext): boolean {
  return first(ctx.headers['if-none-match'])?.trim() === '*';
}

function preconditionFailed(ctx: S3rverContext): void {
  ctx.req.resume();
  answerError(
    ctx,
    412,
    'PreconditionFailed',
    'At least one of the pre-conditions you specified did not hold',
    {
      Condition: 'If-None-Match',
    },
  );
}

function succeeded(ctx: S3rverContext): boolean {
  return ctx.status >= 200 && ctx.status < 300;
}

/**
 * Copies the whole request body to `file`. False when the client went away first: S3 stores
 * nothing for such an upload, while s3rver writes what arrived over the object in place.
 */
async function spoolBody(ctx: S3rverContext, file: string): Promise<boolean> {
  const request = ctx.req as IncomingMessage;
  try {
    await pipeline(request, createWriteStream(file, { mode: OWNER_ONLY }));
    return true;
  } catch (error) {
    if (request.complete) throw error; // the body arrived: the disk failed
    answerError(
      ctx,
      400,
      'IncompleteBody',
      'You did not provide the number of bytes specified by the Content-Length HTTP header',
    );
    return false;
  }
}

async function uploadClass(
  store: S3rverStore,
  bucket: string,
  uploadId: string | undefined,
): Promise<string> {
  // s3rver's upload ids are hex; anything else must not become a path.
  if (uploadId === undefined || !/^[0-9a-f]+$/i.test(uploadId)) return 'STANDARD';
  const saved = await readJson(
    join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId, 'metadata'),
  );
  const value = saved?.[UPLOAD_CLASS_HEADER] ?? saved?.[STORAGE_CLASS_HEADER];
  return typeof value === 'string' ? value : 'STANDARD';
}
