import { answerError, first, type S3rverContext } from './s3-context.js';

/**
 * The XML bodies the local S3 server reads itself are bounded: a DeleteObjects body names at most
 * 1,000 keys of at most 1,024 bytes (each byte escaped as at most a 6-character reference), a
 * CompleteMultipartUpload body at most 10,000 parts of about 200 bytes.
 */
export const MAX_XML_BODY_BYTES = 8 * 1024 * 1024;

/**
 * The request body as text, read up to `limit` bytes. Undefined when it is longer (answered 400
 * MaxMessageLengthExceeded, the connection closed after the answer, so the rest is never read)
 * or the client went away first: memory stays within the limit whatever the client sends.
 */
export async function readBoundedBody(
  ctx: S3rverContext,
  limit: number = MAX_XML_BODY_BYTES,
): Promise<string | undefined> {
  const declared = Number(first(ctx.headers['content-length']) ?? 0);
  const outcome = declared > limit ? 'too long' : await collect(ctx.req, limit);
  if (typeof outcome !== 'object') {
    ctx.set('Connection', 'close');
    if (outcome === 'too long')
      answerError(ctx, 400, 'MaxMessageLengthExceeded', 'Your request was too big.', {
        MaxMessageLengthBytes: String(limit),
      });
    else
      answerError(
        ctx,
        400,
        'IncompleteBody',
        'You did not provide the number of bytes specified by the Content-Length HTTP header',
      );
    return undefined;
  }
  return outcome.text;
}

/** The body, 'too long', or 'gone' when the request ended early. */
function collect(req: NodeJS.ReadableStream, limit: number): Promise<{ text: string } | 'too long' | 'gone'> {
  // An error after the answer (the client resets the connection) must find a listener.
  req.on('error', () => undefined);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: { text: string } | 'too long' | 'gone') => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else {
        req.pause();
        finish('too long');
      }
    };
    const onEnd = () => finish({ text: Buffer.concat(chunks).toString('utf8') });
    const onGone = () => finish('gone');
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}
