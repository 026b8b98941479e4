import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { IncrementalView } from './backfill-record.js';
import {
  InvalidExportManifestError,
  MissingExportFileError,
  UnsupportedExportFormatError,
} from './errors.js';
import { isMissing } from './export-lines.js';
import { MAX_DATA_FILES, MAX_MANIFEST_FILES_BYTES, MAX_S3_KEY_BYTES, MAX_SUMMARY_BYTES } from './limits.js';

/** A DynamoDB export's type: full, or incremental. */
export type ExportType = 'FULL_EXPORT' | 'INCREMENTAL_EXPORT';

/** manifest-summary.json, the fields a backfill reads. */
export interface ExportSummary {
  readonly key: string;
  readonly exportArn: string;
  /** Epoch milliseconds: the snapshot a full export holds, the end of an incremental export's range. */
  readonly exportTime: number;
  readonly tableArn: string | undefined;
  readonly itemCount: number;
  readonly exportType: ExportType;
  /** An incremental export's view type; NEW_AND_OLD_IMAGES for a full export. */
  readonly view: IncrementalView;
  readonly manifestFilesKey: string;
}

/** One line of manifest-files.json. */
export interface ExportDataFile {
  readonly dataFileS3Key: string;
  readonly itemCount: number;
  /** Base64 of the MD5 of the object's bytes (as S3's Content-MD5). */
  readonly md5Checksum: string;
  readonly etag: string | undefined;
}

/** A DynamoDB export's manifests, as a backfill reads them. */
export interface ExportManifest {
  readonly bucket: string;
  readonly summary: ExportSummary;
  readonly files: readonly ExportDataFile[];
}

async function readText(
  client: S3Client,
  bucket: string,
  key: string,
  maxBytes: number,
  namedBy?: string,
): Promise<string> {
  try {
    const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    // Content-Length bounds what the body can hold: a manifest larger than any export writes is not read.
    if (out.ContentLength === undefined || out.ContentLength > maxBytes) {
      (out.Body as { destroy?: () => void } | undefined)?.destroy?.();
      throw new InvalidExportManifestError(
        { key },
        `larger than ${maxBytes} bytes, more than an export writes`,
      );
    }
    return await out.Body!.transformToString('utf8');
  } catch (error) {
    if (isMissing(error)) throw new MissingExportFileError(key, namedBy);
    throw error;
  }
}

function parseJson(text: string, key: string, line?: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidExportManifestError({ key, line }, 'not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new InvalidExportManifestError({ key, line }, 'not a JSON object');
  return value as Record<string, unknown>;
}

function epochMs(value: unknown, key: string, field: string): number {
  const ms = typeof value === 'string' ? Date.parse(value) : typeof value === 'number' ? value : Number.NaN;
  if (!Number.isFinite(ms)) throw new InvalidExportManifestError({ key }, `${field} is not a time`);
  return ms;
}

function text(value: Record<string, unknown>, field: string, key: string, line?: number): string {
  const v = value[field];
  if (typeof v !== 'string' || v === '')
    throw new InvalidExportManifestError({ key, line }, `${field} is missing (not a string)`);
  return v;
}

function count(value: Record<string, unknown>, field: string, key: string, line?: number): number {
  const v = value[field];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new InvalidExportManifestError({ key, line }, `${field} is not a count (a non-negative integer)`);
  return v;
}

function optionalText(value: Record<string, unknown>, field: string, key: string, line?: number) {
  return value[field] === undefined ? undefined : text(value, field, key, line);
}

// base64 of 16 bytes: what S3's Content-MD5 holds.
const MD5_BASE64 = /^[A-Za-z0-9+/]{22}==$/;

/** The folder of an export: where its manifest-summary.json is, every key it names beneath it. */
function folderOf(summaryKey: string): string {
  return summaryKey.slice(0, summaryKey.length - 'manifest-summary.json'.length);
}

/**
 * Why `key` is not an object of the export whose folder is `folder` (ending in `/`, or empty), or
 * undefined when it is one. S3 resolves no `..`, but a proxy, a mirror or a copy to disk may: a
 * key is refused if any of its segments is `.`, `..` or empty, or it holds a control character.
 */
function outsideReason(key: string, folder: string, under: string): string | undefined {
  if (!key.startsWith(folder + under)) return `is not under the export's folder ${folder}${under}`;
  if (Buffer.byteLength(key) > MAX_S3_KEY_BYTES) return `is longer than S3's ${MAX_S3_KEY_BYTES} bytes`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f\\]/.test(key)) return 'holds a control character or a backslash';
  const segments = key.slice(folder.length).split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return "has an empty, '.' or '..' segment";
  return undefined;
}

/**
 * Why `key` is not a data file of an export (`…/AWSDynamoDB/<id>/data/<file>`, no `.`, `..` or
 * empty segment, no control character), or undefined when it is one: the check runBackfill makes
 * of each manifest line, for a caller given one data file's key alone (a Distributed Map child).
 */
export function dataFileKeyProblem(key: string): string | undefined {
  const at = key.lastIndexOf('/data/');
  if (at === -1 || key.indexOf('/', at + '/data/'.length) !== -1)
    return "is not a file in an export's data/ folder";
  return outsideReason(key, '', '');
}

/** The export's folder for a manifest-summary.json key, or a prefix given as `…/AWSDynamoDB/<id>`. */
export function summaryKeyOf(prefix: string): string {
  const trimmed = prefix.replace(/^\/+/, '').replace(/\/+$/, '');
  return trimmed.endsWith('manifest-summary.json') ? trimmed : `${trimmed}/manifest-summary.json`;
}

/** manifest-summary.json of the export whose data file this is (`…/AWSDynamoDB/<id>/data/<file>`). */
export function summaryKeyOfDataFile(dataFileKey: string): string | undefined {
  const at = dataFileKey.lastIndexOf('/data/');
  return at === -1 ? undefined : `${dataFileKey.slice(0, at)}/manifest-summary.json`;
}

/**
 * manifest-summary.json's text, checked: the format, type and view this reader knows, an
 * exportArn, a time, an item count, and a manifestFilesS3Key inside the export's own folder.
 */
export function parseExportSummary(json: string, key: string): ExportSummary {
  const s = parseJson(json, key);
  const format = s.outputFormat ?? s.exportFormat ?? 'DYNAMODB_JSON';
  if (format !== 'DYNAMODB_JSON')
    throw typeof format === 'string'
      ? new UnsupportedExportFormatError(key, format)
      : new InvalidExportManifestError({ key }, 'outputFormat is not a string');
  const exportType = s.exportType ?? 'FULL_EXPORT';
  if (exportType !== 'FULL_EXPORT' && exportType !== 'INCREMENTAL_EXPORT')
    throw new InvalidExportManifestError({ key }, 'exportType is not FULL_EXPORT or INCREMENTAL_EXPORT');
  const view = s.outputView ?? 'NEW_AND_OLD_IMAGES';
  if (view !== 'NEW_AND_OLD_IMAGES' && view !== 'NEW_IMAGE')
    throw new InvalidExportManifestError({ key }, 'outputView is not NEW_AND_OLD_IMAGES or NEW_IMAGE');
  const tableArn = optionalText(s, 'tableArn', key);
  const manifestFilesKey = text(s, 'manifestFilesS3Key', key);
  const outside = outsideReason(manifestFilesKey, folderOf(key), '');
  if (outside !== undefined) throw new InvalidExportManifestError({ key }, `manifestFilesS3Key ${outside}`);
  return {
    key,
    exportArn: text(s, 'exportArn', key),
    // An incremental export's state is as of the end of its range.
    exportTime: epochMs(
      exportType === 'INCREMENTAL_EXPORT' ? (s.exportToTime ?? s.exportTime) : s.exportTime,
      key,
      'exportTime',
    ),
    tableArn,
    itemCount: count(s, 'itemCount', key),
    exportType,
    view,
    manifestFilesKey,
  };
}

export async function readExportSummary(
  client: S3Client,
  bucket: string,
  key: string,
): Promise<ExportSummary> {
  return parseExportSummary(await readText(client, bucket, key, MAX_SUMMARY_BYTES), key);
}

/**
 * manifest-files.json's text, checked line by line (an error names the line): each data file's
 * key lies in the export's `data/` folder and is listed once, its item count is a count and its
 * md5Checksum base64 of an MD5. The files' item counts add up to the summary's; a manifest listing
 * no file while the summary claims items is refused, as is one listing more than MAX_DATA_FILES.
 */
export function parseManifestFiles(listing: string, summary: ExportSummary): ExportDataFile[] {
  const key = summary.manifestFilesKey;
  const folder = folderOf(summary.key);
  const files: ExportDataFile[] = [];
  const seen = new Set<string>();
  let items = 0;
  let line = 0;
  for (let start = 0; start <= listing.length; ) {
    const end = listing.indexOf('\n', start);
    const entryText = listing.slice(start, end === -1 ? listing.length : end);
    start = end === -1 ? listing.length + 1 : end + 1;
    line++;
    if (entryText.trim() === '') continue;
    if (files.length === MAX_DATA_FILES)
      throw new InvalidExportManifestError({ key, line }, `more than ${MAX_DATA_FILES} data files`);
    const entry = parseJson(entryText, key, line);
    const dataFileS3Key = text(entry, 'dataFileS3Key', key, line);
    const outside = outsideReason(dataFileS3Key, folder, 'data/');
    if (outside !== undefined)
      throw new InvalidExportManifestError({ key, line }, `dataFileS3Key ${outside}`);
    if (seen.has(dataFileS3Key))
      throw new InvalidExportManifestError({ key, line }, 'dataFileS3Key is listed twice');
    seen.add(dataFileS3Key);
    const md5Checksum = text(entry, 'md5Checksum', key, line);
    if (!MD5_BASE64.test(md5Checksum))
      throw new InvalidExportManifestError({ key, line }, 'md5Checksum is not the base64 of an MD5');
    const itemCount = count(entry, 'itemCount', key, line);
    items += itemCount;
    files.push({ dataFileS3Key, itemCount, md5Checksum, etag: optionalText(entry, 'etag', key, line) });
  }
  if (files.length === 0 && summary.itemCount > 0)
    throw new InvalidExportManifestError(
      { key },
      `lists no data files, but ${summary.key} says the export holds ${summary.itemCount} items`,
    );
  if (items !== summary.itemCount)
    throw new InvalidExportManifestError(
      { key: summary.key },
      `itemCount ${summary.itemCount} is not the sum of the data files' item counts (${items})`,
    );
  return files;
}

/**
 * An export's two manifests: manifest-summary.json under `prefix` (the export's folder,
 * `…/AWSDynamoDB/<exportId>`), then the manifest-files.json it names, one data file per line,
 * each checked (parseExportSummary, parseManifestFiles) before anything is read from the files.
 */
export async function readExportManifest(
  client: S3Client,
  bucket: string,
  prefix: string,
): Promise<ExportManifest> {
  const summary = await readExportSummary(client, bucket, summaryKeyOf(prefix));
  const listing = await readText(
    client,
    bucket,
    summary.manifestFilesKey,
    MAX_MANIFEST_FILES_BYTES,
    summary.key,
  );
  return { bucket, summary, files: parseManifestFiles(listing, summary) };
}
