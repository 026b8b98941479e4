// What may reach s3rver. Its store joins the bucket name and a multipart upload's identifiers
// into file paths unchecked, and its handlers hand request bodies to busboy 0.3 (whose dicer
// crashes the process on a 150-byte form: no fixed release) and to fast-xml-parser 3 (published
// advisories, no fixed 3.x). The fence answers, with S3's errors, every request that would take
// one of those paths; docs/local.md has the decision and the advisories.
import { answerError, requestTarget, type S3rverMiddleware, type S3rverStore } from './s3-context.js';
import { checkUploadParameters, takeCompletionBody } from './s3-multipart.js';

/**
 * S3's bucket naming rules (3 to 63 lowercase letters, digits, dots and hyphens, starting and
 * ending with a letter or digit, no two dots in a row): a name that passes is one folder name,
 * never `.`, `..` or a path.
 */
export function isBucketName(name: string): boolean {
  return /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name) && !name.includes('..');
}

/**
 * Sub-resources whose PUT s3rver reads with fast-xml-parser (bucket CORS and website
 * configuration, object tagging). tidewater uses none of them.
 */
const XML_CONFIG_SUBRESOURCES = ['cors', 'website', 'tagging'] as const;

/** Placed after s3rver's virtual-host rewrite, so the path always starts with the bucket. */
export function s3Fence(store: S3rverStore): S3rverMiddleware {
  return async (ctx, next) => {
    const target = requestTarget(ctx.path);
    if (target === 'malformed')
      return answerError(ctx, 400, 'InvalidURI', "Couldn't parse the specified URI.");
    if (target === undefined) return next();
    const { bucket, key } = target;
    if (!isBucketName(bucket))
      return answerError(ctx, 400, 'InvalidBucketName', 'The specified bucket is not valid.', {
        BucketName: bucket.slice(0, 64),
      });
    const query = ctx.query;
    // POST Object is the browser-form upload (multipart/form-data, parsed by busboy); s3rver
    // serves it for a POST on a bucket without a sub-resource it knows.
    if (ctx.method === 'POST' && key === undefined && query.delete === undefined)
      return notImplemented(ctx, 'POST Object (a browser-form upload) is not served by the local S3 server');
    if (ctx.method === 'PUT' && XML_CONFIG_SUBRESOURCES.some((name) => query[name] !== undefined))
      return notImplemented(
        ctx,
        'CORS, website and tagging configuration are not served by the local S3 server',
      );
    if (!(await checkUploadParameters(ctx, store, bucket))) return;
    const uploadId = query.uploadId;
    if (
      ctx.method === 'POST' &&
      key !== undefined &&
      typeof uploadId === 'string' &&
      !(await takeCompletionBody(ctx, store, bucket, uploadId))
    )
      return;
    return next();
  };
}

function notImplemented(ctx: Parameters<S3rverMiddleware>[0], message: string): void {
  answerError(ctx, 501, 'NotImplemented', message);
}
