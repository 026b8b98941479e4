import { pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { GetObjectCommand, NoSuchKey, type S3Client } from '@aws-sdk/client-s3';
import { CorruptExportFileError, MissingExportFileError } from './errors.js';

/** One line of a data file, numbered from 1 as an editor shows it. */
export interface ExportLine {
  readonly line: number;
  readonly text: string;
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

/**
 * The lines of a gzip data file, read from S3 as a stream: one chunk in memory at a time, however
 * large the file. A gzip stream cut short or not gzip at all ends in CorruptExportFileError naming
 * the first line not read whole; the lines before it have been yielded.
 */
export async function* exportLines(
  client: S3Client,
  bucket: string,
  key: string,
  manifestKey?: string,
): AsyncGenerator<ExportLine> {
  const body = await openObject(client, bucket, key, manifestKey);
  // pipeline() destroys the gunzip stream with the body's error too, so one for-await sees both.
  const text = pipeline(body, createGunzip(), () => undefined);
  text.setEncoding('utf8');
  let line = 0;
  let rest = '';
  try {
    for await (const chunk of text as AsyncIterable<string>) {
      let start = 0;
      let end = chunk.indexOf('\n');
      if (end !== -1 && rest !== '') {
        yield { line: ++line, text: rest + chunk.slice(0, end) };
        rest = '';
        start = end + 1;
        end = chunk.indexOf('\n', start);
      }
      while (end !== -1) {
        yield { line: ++line, text: chunk.slice(start, end) };
        start = end + 1;
        end = chunk.indexOf('\n', start);
      }
      rest = rest === '' ? chunk.slice(start) : rest + chunk.slice(start);
    }
  } catch (error) {
    if (isMissing(error)) throw new MissingExportFileError(key, manifestKey);
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'Z_BUF_ERROR' || code === 'Z_DATA_ERROR' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
      throw new CorruptExportFileError(
        key,
        line + 1,
        code === 'Z_DATA_ERROR'
          ? 'not a gzip stream (or a corrupted one)'
          : 'the gzip stream ends early (truncated file)',
        { cause: error },
      );
    }
    throw error;
  } finally {
    body.destroy();
  }
  if (rest !== '') yield { line: ++line, text: rest };
}
