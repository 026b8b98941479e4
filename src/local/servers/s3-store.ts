import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, lstat, mkdir, readdir, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { md5Tap } from '../../core/digest.js';
import { OWNER_ONLY } from '../../core/write-file-atomic.js';

// How the local S3 server lays keys out on disk. s3rver 3.7 joins a key's segments into a path:
// a key with `..` segments is written outside its directory (and never listed), `a//b` and `a/b`
// are one file, and its listing walks the tree with readdirSync/statSync and its DELETE removes
// emptied folders, so a DELETE or PUT in the same folder makes a concurrent listing or DELETE
// fail with ENOENT (a 500 S3 never answers). Here each segment gets a reversible, safe file name
// and the store's listing and delete are replaced by ones that tolerate concurrent changes.
// Every file it writes is its owner's only (0600) in folders that are too (0700), as the rest of
// tidewater writes item data: objects are items, archived.

/** Read and write for the owner only, whatever the umask (chmod is not masked). */
const FILE_MODE = OWNER_ONLY;
const FOLDER_MODE = 0o700;

/** The FilesystemStore methods replaced on the server's own store instance. */
export interface PatchableStore {
  rootDirectory: string;
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  getMetadata(bucket: string, key: string): Promise<Record<string, string | number>>;
  listObjects(bucket: string, options: ListOptions): Promise<ListResult>;
  deleteObject(bucket: string, key: string): Promise<void>;
  putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
  putMetadata(bucket: string, key: string, metadata: Record<string, unknown>, md5?: string): Promise<void>;
  putBucket(bucket: string): Promise<unknown>;
  getBucket(bucket: string): Promise<unknown>;
  initiateUpload(
    bucket: string,
    key: string,
    uploadId: string,
    metadata: Record<string, unknown>,
  ): Promise<void>;
  putPart(
    bucket: string,
    uploadId: string,
    partNumber: string,
    content: NodeJS.ReadableStream,
  ): Promise<{ size: number; md5: string }>;
  copyObject(
    srcBucket: string,
    srcKey: string,
    destBucket: string,
    destKey: string,
    metadata?: Record<string, unknown>,
  ): Promise<unknown>;
}

/** What s3rver hands its store's putObject. */
interface StoredObject {
  bucket: string;
  key: string;
  content: Buffer | NodeJS.ReadableStream;
  metadata: Record<string, unknown>;
}

interface ListOptions {
  delimiter?: string;
  startAfter?: string;
  prefix?: string;
  maxKeys?: number;
}

interface ListResult {
  objects: unknown[];
  commonPrefixes: string[];
  isTruncated: boolean;
}

/** s3rver's suffix of the file that holds an object's body. */
const OBJECT_SUFFIX = '._S3rver_object';

/**
 * A key segment as a file name: '', '.', '..' (which a path would collapse or climb) and any
 * segment holding '%' or NUL are percent-escaped ('%' alone for the empty segment); every other
 * segment is its own name, so the files of ordinary keys stay where s3rver put them.
 */
export function encodeSegment(segment: string): string {
  if (segment === '') return '%';
  if (segment === '.' || segment === '..') return segment.replaceAll('.', '%2E');
  return /[%\0]/.test(segment) ? segment.replace(/[%\0]/g, (c) => (c === '%' ? '%25' : '%00')) : segment;
}

export function decodeSegment(name: string): string {
  if (name === '%') return '';
  return name.includes('%')
    ? name.replace(/%(25|00|2E)/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    : name;
}

export function encodeKey(key: string): string {
  return key.split('/').map(encodeSegment).join('/');
}

export function decodeKey(path: string): string {
  return path.split('/').map(decodeSegment).join('/');
}

/** S3 lists keys in UTF-8 binary order; JavaScript compares UTF-16 code units. */
function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Every object key under a bucket folder; entries removed while walking are skipped. */
async function walkKeys(folder: string, relative: string, out: string[]): Promise<void> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (error) {
    if (isGone(error)) return;
    throw error;
  }
  for (const name of names) {
    const path = join(folder, name);
    let directory: boolean;
    try {
      directory = (await lstat(path)).isDirectory();
    } catch (error) {
      if (isGone(error)) continue;
      throw error;
    }
    const inner = relative === '' ? name : `${relative}/${name}`;
    if (directory) await walkKeys(path, inner, out);
    else if (name.endsWith(OBJECT_SUFFIX)) out.push(decodeKey(inner.slice(0, -OBJECT_SUFFIX.length)));
  }
}

/**
 * Writes `path` through a temporary file beside it, renamed over it when complete. The temporary
 * name does not end with an object suffix, so a listing never takes it for an object.
 */
async function writeAtomically(path: string, write: (temp: string) => Promise<void>): Promise<void> {
  const temp = `${path}.${randomUUID()}.part`;
  try {
    await write(temp);
    await chmod(temp, FILE_MODE);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** `path` when it lies inside `root`; a thrown error (a 500) otherwise. */
function inside(root: string, path: string): string {
  const from = relative(root, path);
  if (from === '' || from === '..' || from.startsWith(`..${sep}`) || isAbsolute(from))
    throw new Error('the local S3 server refused a path outside its directory');
  return path;
}

function isGone(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Replaces the store's key-to-path mapping, listing and delete on this instance only. */
export function patchStore(store: PatchableStore): void {
  const require = createRequire(import.meta.url);
  const S3Object = require('s3rver/lib/models/object.js') as new (
    bucket: string,
    key: string,
    content: null,
    metadata: Record<string, string | number>,
  ) => unknown;
  const allowedMetadata = (S3Object as unknown as { ALLOWED_METADATA: readonly string[] }).ALLOWED_METADATA;
  const resourcePath = store.getResourcePath.bind(store);
  store.getResourcePath = (bucket, key, resource) =>
    inside(
      store.rootDirectory,
      resourcePath(bucket, key === undefined ? undefined : encodeKey(key), resource),
    );

  const putBucket = store.putBucket.bind(store);
  store.putBucket = async (bucket) => {
    await mkdir(inside(store.rootDirectory, join(store.rootDirectory, bucket)), {
      recursive: true,
      mode: FOLDER_MODE,
    });
    return putBucket(bucket);
  };

  const copyObject = store.copyObject.bind(store);
  store.copyObject = async (srcBucket, srcKey, destBucket, destKey, metadata) => {
    // s3rver makes the folder with the umask's mode; its copies keep the source's mode (0600).
    await mkdir(dirname(store.getResourcePath(destBucket, destKey, 'object')), {
      recursive: true,
      mode: FOLDER_MODE,
    });
    return copyObject(srcBucket, srcKey, destBucket, destKey, metadata);
  };

  // An upload's folder and its parts. The fence (s3-fence.ts) admits only upload ids and part
  // numbers of S3's forms; inside() is the last line, should anything else get this far.
  const uploadPath = (bucket: string, uploadId: string, ...names: string[]) =>
    inside(
      store.rootDirectory,
      join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId, ...names),
    );
  store.initiateUpload = async (bucket, key, uploadId, metadata) => {
    await mkdir(uploadPath(bucket, uploadId), { recursive: true, mode: FOLDER_MODE });
    await writeFile(uploadPath(bucket, uploadId, 'key'), key, { mode: FILE_MODE });
    await writeFile(uploadPath(bucket, uploadId, 'metadata'), JSON.stringify(metadata), { mode: FILE_MODE });
  };
  store.putPart = async (bucket, uploadId, partNumber, content) => {
    const partPath = uploadPath(bucket, uploadId, String(partNumber));
    const tap = md5Tap();
    await pipeline(content, tap.stream, createWriteStream(partPath, { mode: FILE_MODE }));
    const size = tap.bytes();
    const md5 = tap.digest('hex');
    await writeFile(`${partPath}.md5`, md5, { mode: FILE_MODE });
    return { size, md5 };
  };

  // Emptied folders stay: S3 has no folders, so they are never listed, and removing them raced
  // with PUTs (mkdir then write) and with listings in the same folder.
  store.deleteObject = async (bucket, key) => {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        unlink(store.getResourcePath(bucket, key, resource)).catch((error: unknown) => {
          if (!isGone(error)) throw error;
        }),
      ),
    );
  };

  // s3rver writes an object's file and its metadata.json in place: a GET or a listing reading
  // them meanwhile read a truncated object or half a JSON document ("Unexpected end of JSON
  // input", answered 500). Written beside and renamed, a reader sees the old file or the new one.
  store.putObject = async (object) => {
    const objectPath = store.getResourcePath(object.bucket, object.key, 'object');
    await mkdir(dirname(objectPath), { recursive: true, mode: FOLDER_MODE });
    let size = 0;
    let md5 = '';
    await writeAtomically(objectPath, async (temp) => {
      if (Buffer.isBuffer(object.content)) {
        size = object.content.length;
        md5 = createHash('md5').update(object.content).digest('hex');
        await writeFile(temp, object.content, { mode: FILE_MODE });
        return;
      }
      const tap = md5Tap();
      await pipeline(object.content, tap.stream, createWriteStream(temp, { mode: FILE_MODE }));
      size = tap.bytes();
      md5 = tap.digest('hex');
    });
    await store.putMetadata(object.bucket, object.key, object.metadata, md5);
    return { size, md5 };
  };

  store.putMetadata = async (bucket, key, metadata, md5) => {
    const json = Object.fromEntries(
      Object.entries(metadata).filter(
        ([name]) => allowedMetadata.includes(name) || name.startsWith('x-amz-meta-'),
      ),
    );
    if (md5)
      await writeAtomically(store.getResourcePath(bucket, key, 'object.md5'), (temp) =>
        writeFile(temp, md5, { mode: FILE_MODE }),
      );
    await writeAtomically(store.getResourcePath(bucket, key, 'metadata.json'), (temp) =>
      writeFile(temp, JSON.stringify(json, null, 2), { mode: FILE_MODE }),
    );
  };

  store.listObjects = async (bucket, options) => {
    const { delimiter = '', startAfter = '', prefix = '', maxKeys = Number.POSITIVE_INFINITY } = options;
    const all: string[] = [];
    await walkKeys(join(store.rootDirectory, bucket), '', all);
    all.sort(compareKeys);
    const keys: string[] = [];
    const commonPrefixes = new Set<string>();
    let isTruncated = false;
    for (const key of all) {
      if (compareKeys(key, startAfter) <= 0 || !key.startsWith(prefix)) continue;
      const at = delimiter === '' ? -1 : key.indexOf(delimiter, prefix.length);
      if (at >= 0) {
        commonPrefixes.add(key.slice(0, at + delimiter.length));
        continue;
      }
      if (keys.length >= maxKeys) {
        isTruncated = true;
        break;
      }
      keys.push(key);
    }
    const objects = await Promise.all(
      keys.map(async (key) => {
        try {
          return new S3Object(bucket, key, null, await store.getMetadata(bucket, key));
        } catch (error) {
          if (isGone(error)) return undefined; // deleted since the walk
          throw error;
        }
      }),
    );
    return {
      objects: objects.filter((o) => o !== undefined),
      commonPrefixes: [...commonPrefixes].sort(compareKeys),
      isTruncated,
    };
  };
}
