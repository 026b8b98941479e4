// DeleteObjects, served by the local S3 server itself: s3rver's handler reads the body with
// fast-xml-parser 3 (published advisories, no fixed 3.x: docs/local.md), which also turns a key
// of digits into a number (`007` deleted `7`, or failed with a 500). Here the body is read
// bounded and strictly (s3-xml.ts), and each key is deleted in its turn of the per-key queue, so
// a DeleteObjects is ordered with the PUTs and GETs of its keys as a DELETE is.
import { readBoundedBody } from './s3-body.js';
import { answerError, type S3rverContext, type S3rverStore } from './s3-context.js';
import type { KeyedQueue } from './s3-keyed-queue.js';
import { childrenNamed, childText, readXml } from './s3-xml.js';

/** S3: "The request can contain a list of up to 1,000 keys." */
const MAX_KEYS = 1_000;

export async function deleteObjects(
  ctx: S3rverContext,
  store: S3rverStore,
  writes: KeyedQueue,
  bucket: string,
): Promise<void> {
  const text = await readBoundedBody(ctx);
  if (text === undefined) return;
  const root = readXml(text);
  const keys = root?.name === 'Delete' ? childrenNamed(root, 'Object').map((o) => childText(o, 'Key')) : [];
  if (keys.length === 0 || keys.length > MAX_KEYS || keys.some((key) => key === undefined || key === '')) {
    return answerError(
      ctx,
      400,
      'MalformedXML',
      'The XML you provided was not well-formed or did not validate against our published schema.',
    );
  }
  if (!(await store.getBucket(bucket)))
    return answerError(ctx, 404, 'NoSuchBucket', 'The specified bucket does not exist', {
      BucketName: bucket,
    });
  const quiet = root !== undefined && childText(root, 'Quiet')?.trim() === 'true';
  const deleted = keys as string[];
  for (const key of deleted) {
    await writes.run(`${bucket}/${key}`, async () => {
      if (await store.existsObject(bucket, key)) await store.deleteObject(bucket, key);
    });
  }
  ctx.status = 200;
  ctx.body = {
    DeleteResult: {
      '@': { xmlns: 'http://s3.amazonaws.com/doc/2006-03-01/' },
      // Quiet mode answers only the keys that failed; none fails here.
      ...(quiet ? {} : { Deleted: deleted.map((key) => ({ Key: key })) }),
    },
  };
}
