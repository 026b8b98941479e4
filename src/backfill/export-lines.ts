import { pipeline, type Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import { GetObjectCommand, NoSuchKey, type S3Client } from '@aws-sdk/client-s3';
import { md5Tap } from '../core/digest.js';
import {
  type BackfillError,
  CorruptExportFileError,
  ExportFileInflationError,
  ExportFileMismatchError,
  MissingExportFileError,
} from './errors.js';
import { INFLATE_RATIO_FLOOR_BYTES, MAX_LINE_CHARS } from './limits.js';
import { type ExportLine, LineSplitter } from './line-splitter.js';

export type { ExportLine } from './line-splitter.js';

/** What manifest-files.json says of a data file, checked as it is read; and the bound on its gzip. */
export interface ExportLinesCheck {
  /** The manifest that named the file, for the errors. */
  readonly manifestKey?: string | undefined;
  /** Base64 of the MD5 of the object's bytes (as S3's Content-MD5). */
  readonly md5Checksum?: string | undefined;
  /** Lines holding an item (not empty). */
  readonly itemCount?: number | undefined;
  /** Decompressed bytes per compressed byte, at most (past INFLATE_RATIO_FLOOR_BYTES). */
  readonly maxInflateRatio: number;
}

/** S3's NoSuchKey, as the SDK class or by name (a GetObject body read later). */
export function isMissing(error: unknown): boolean {
  return error instanceof NoSuchKey || (error as { name?: unknown } | null)?.name === 'NoSuchKey';
}

async function openObject(
  client: S3Client,
  bucket: string,
  key: string,
  manifestKey?: string,
): Promise<Readable> {
  try {
    const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return out.Body as Readable;
  } catch (error) {
    if (isMissing(error)) throw new MissingExportFileError(key, manifestKey);
    throw error;
  }
}

function corrupt(error: unknown, key: string, line: number): BackfillError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'Z_BUF_ERROR' && code !== 'Z_DATA_ERROR' && code !== 'ERR_STREAM_PREMATURE_CLOSE')
    return undefined;
  return new CorruptExportFileError(
    key,
    line,
    code === 'Z_DATA_ERROR'
      ? 'not a gzip stream (or a corrupted one)'
      : 'the gzip stream ends early (truncated file)',
    { cause: error },
  );
}

/**
 * The lines of a gzip data file, read from S3 as a stream, in the runs each decoded chunk ends: one
 * chunk and at most one line of MAX_LINE_CHARS in memory, however large the file, and work
 * proportional to its compressed size. A run per chunk rather than a line at a time: the consumer's
 * per-line work stays synchronous, one await (and one async-generator step) per chunk of ~16 KiB
 * instead of per line. Its MD5 and item count are checked as it streams (too many items at the first
 * extra one, the rest when it ends), each an ExportFileMismatchError. A gzip stream cut short or not
 * gzip at all ends in CorruptExportFileError naming the first line not read whole; the lines before
 * any of these errors have been yielded.
 */
export async function* exportLineRuns(
  client: S3Client,
  bucket: string,
  key: string,
  check: ExportLinesCheck,
): AsyncGenerator<readonly ExportLine[]> {
  // Not the ETag: a copy of the export (a multipart copy) has another, its bytes the same MD5.
  const body = await openObject(client, bucket, key, check.manifestKey);
  const tap = md5Tap();
  // pipeline() destroys the gunzip stream with the body's error too, so one for-await sees both.
  const inflated = pipeline(body, tap.stream, createGunzip(), () => undefined);
  const decoder = new StringDecoder('utf8');
  const splitter = new LineSplitter(key, MAX_LINE_CHARS);
  const most = check.itemCount ?? Number.POSITIVE_INFINITY;
  let decompressed = 0;
  let items = 0;
  const tooMany = (line: number): ExportFileMismatchError =>
    new ExportFileMismatchError(
      key,
      'itemCount',
      `it holds more than ${check.itemCount} items (line ${line})`,
      check.manifestKey,
    );
  try {
    for await (const chunk of inflated as AsyncIterable<Buffer>) {
      decompressed += chunk.length;
      if (decompressed > INFLATE_RATIO_FLOOR_BYTES && decompressed > check.maxInflateRatio * tap.bytes())
        throw new ExportFileInflationError(key, splitter.line + 1, check.maxInflateRatio);
      const run = splitter.push(decoder.write(chunk));
      for (let i = 0; i < run.length; i++) {
        if (run[i]!.text === '' || ++items <= most) continue;
        // The lines before the extra item are yielded first, as a line-by-line reader would.
        if (i > 0) yield run.slice(0, i);
        throw tooMany(run[i]!.line);
      }
      if (run.length !== 0) yield run;
    }
  } catch (error) {
    if (isMissing(error)) throw new MissingExportFileError(key, check.manifestKey);
    throw corrupt(error, key, splitter.line + 1) ?? error;
  } finally {
    inflated.destroy();
    body.destroy();
  }
  splitter.push(decoder.end());
  const last = splitter.end();
  if (last !== undefined && last.text !== '' && ++items > most) throw tooMany(last.line);
  const digest = tap.digest('base64');
  if (check.md5Checksum !== undefined && digest !== check.md5Checksum)
    throw new ExportFileMismatchError(key, 'md5Checksum', `its MD5 is ${digest}`, check.manifestKey);
  if (check.itemCount !== undefined && items !== check.itemCount)
    throw new ExportFileMismatchError(key, 'itemCount', `it holds ${items} items`, check.manifestKey);
  if (last !== undefined) yield [last];
}
