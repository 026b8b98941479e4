// A multipart upload's identifiers become file names in s3rver's store (uploads/<uploadId>/<part>)
// and completing one removes uploads/<uploadId> recursively: unchecked, `uploadId=../../x` wrote
// and deleted anywhere the user can. They are checked here, with S3's answers, before s3rver
// sees the request; the completion body is read here (bounded, s3-xml.ts) and handed on in a
// canonical form with nothing of the client's text left in it.
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { readBoundedBody } from './s3-body.js';
import { answerError, first, type S3rverContext, type S3rverStore } from './s3-context.js';
import { childrenNamed, childText, readXml } from './s3-xml.js';

/** s3rver's upload ids: 16 random bytes in hex (controllers/object.js initiateMultipartUpload). */
const UPLOAD_ID = /^[0-9a-f]{32}$/;
/** S3: "Part numbers can be any number from 1 to 10,000, inclusive." */
const PART_NUMBER = /^[1-9][0-9]{0,4}$/;
const MAX_PART_NUMBER = 10_000;
/** s3rver's part ETags: the part's MD5 in hex, quoted or not in the request. */
const PART_ETAG = /^"?([0-9a-f]{32})"?$/;

/** The folder of an upload in the store, for an id already checked against UPLOAD_ID. */
export function uploadFolder(store: S3rverStore, bucket: string, uploadId: string): string {
  return join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId);
}

function noSuchUpload(ctx: S3rverContext, uploadId: string): void {
  answerError(
    ctx,
    404,
    'NoSuchUpload',
    'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
    { UploadId: uploadId.slice(0, 64) },
  );
}

function invalidPartNumber(ctx: S3rverContext, value: string): void {
  answerError(ctx, 400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive', {
    ArgumentName: 'partNumber',
    ArgumentValue: value.slice(0, 64),
  });
}

function isPartNumber(value: string | undefined): value is string {
  return value !== undefined && PART_NUMBER.test(value) && Number(value) <= MAX_PART_NUMBER;
}

/**
 * Checks `uploadId` and `partNumber` wherever a request carries them. False when the request was
 * answered (refused); an upload id of the right form must also name an upload of the bucket.
 */
export async function checkUploadParameters(
  ctx: S3rverContext,
  store: S3rverStore,
  bucket: string,
): Promise<boolean> {
  const uploadId = ctx.query.uploadId;
  const partNumber = ctx.query.partNumber;
  if (partNumber !== undefined || (uploadId !== undefined && ctx.method === 'PUT')) {
    if (typeof partNumber !== 'string' || !isPartNumber(partNumber)) {
      invalidPartNumber(ctx, String(first(partNumber) ?? ''));
      return false;
    }
  }
  if (uploadId === undefined) return true;
  if (typeof uploadId !== 'string' || !UPLOAD_ID.test(uploadId)) {
    noSuchUpload(ctx, String(first(uploadId) ?? ''));
    return false;
  }
  try {
    await access(join(uploadFolder(store, bucket, uploadId), 'key'));
  } catch {
    noSuchUpload(ctx, uploadId);
    return false;
  }
  return true;
}

/**
 * CompleteMultipartUpload's body read and checked as S3 does (MalformedXML, InvalidPartOrder,
 * InvalidPart), then handed to s3rver rewritten: only part numbers and ETags, in a form its XML
 * parser reads back as they are. False when the request was answered.
 */
export async function takeCompletionBody(
  ctx: S3rverContext,
  store: S3rverStore,
  bucket: string,
  uploadId: string,
): Promise<boolean> {
  const text = await readBoundedBody(ctx);
  if (text === undefined) return false;
  const root = readXml(text);
  const parts =
    root?.name === 'CompleteMultipartUpload'
      ? childrenNamed(root, 'Part').map((part) => ({
          number: childText(part, 'PartNumber')?.trim(),
          etag: PART_ETAG.exec(childText(part, 'ETag')?.trim() ?? '')?.[1],
        }))
      : [];
  if (parts.length === 0 || parts.length > MAX_PART_NUMBER || parts.some((p) => !isPartNumber(p.number))) {
    answerError(
      ctx,
      400,
      'MalformedXML',
      'The XML you provided was not well-formed or did not validate against our published schema.',
    );
    return false;
  }
  for (let i = 1; i < parts.length; i++) {
    if (Number(parts[i]?.number) <= Number(parts[i - 1]?.number)) {
      answerError(
        ctx,
        400,
        'InvalidPartOrder',
        'The list of parts was not in ascending order. The parts list must be specified in order by part number.',
        { UploadId: uploadId },
      );
      return false;
    }
  }
  const folder = uploadFolder(store, bucket, uploadId);
  for (const part of parts) {
    const stored = await readFile(join(folder, `${Number(part.number)}.md5`), 'utf8').catch(() => undefined);
    if (part.etag === undefined || stored?.trim() !== part.etag) {
      answerError(
        ctx,
        400,
        'InvalidPart',
        "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
        { UploadId: uploadId, PartNumber: String(Number(part.number)) },
      );
      return false;
    }
  }
  // Quoted, so s3rver's parser keeps each ETag a string (it turns digit-only text into numbers).
  const canonical = `<CompleteMultipartUpload>${parts
    .map((p) => `<Part><PartNumber>${Number(p.number)}</PartNumber><ETag>"${p.etag}"</ETag></Part>`)
    .join('')}</CompleteMultipartUpload>`;
  ctx.req = Readable.from([Buffer.from(canonical)]);
  return true;
}
