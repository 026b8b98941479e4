import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { IncrementalView } from './backfill-record.js';
import {
  InvalidExportManifestError,
  MissingExportFileError,
  UnsupportedExportFormatError,
} from './errors.js';
import { isMissing } from './export-lines.js';

/** A DynamoDB export's type: full, or incremental. */
export type ExportType = 'FULL_EXPORT' | 'INCREMENTAL_EXPORT';

/** manifest-summary.json, the fields a backfill reads. */
export interface ExportSummary {
  readonly key: string;
  readonly exportArn: string;
  /** Epoch milliseconds: the snapshot a full export holds, the end of an incremental export's range. */
  readonly exportTime: number;
  readonly tableArn: string | undefined;
  readonly itemCount: number | undefined;
  readonly exportType: ExportType;
  /** An incremental export's view type; NEW_AND_OLD_IMAGES for a full export. */
  readonly view: IncrementalView;
  readonly manifestFilesKey: string;
}

/** One line of manifest-files.json. */
export interface ExportDataFile {
  readonly dataFileS3Key: string;
  readonly itemCount: number | undefined;
  readonly md5Checksum: string | undefined;
  readonly etag: string | undefined;
}

/** A DynamoDB export's manifests, as a backfill reads them. */
export interface ExportManifest {
  readonly bucket: string;
  readonly summary: ExportSummary;
  readonly files: readonly ExportDataFile[];
}

async function readText(client: S3Client, bucket: string, key: string, namedBy?: string): Promise<string> {
  try {
    const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
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

export async function readExportSummary(
  client: S3Client,
  bucket: string,
  key: string,
): Promise<ExportSummary> {
  const s = parseJson(await readText(client, bucket, key), key);
  const format = s.outputFormat ?? s.exportFormat ?? 'DYNAMODB_JSON';
  if (format !== 'DYNAMODB_JSON') throw new UnsupportedExportFormatError(key, String(format));
  const exportType = (s.exportType ?? 'FULL_EXPORT') as string;
  if (exportType !== 'FULL_EXPORT' && exportType !== 'INCREMENTAL_EXPORT')
    throw new InvalidExportManifestError(
      { key },
      `exportType ${JSON.stringify(exportType)} is not FULL_EXPORT or INCREMENTAL_EXPORT`,
    );
  const view = (s.outputView ?? 'NEW_AND_OLD_IMAGES') as string;
  if (view !== 'NEW_AND_OLD_IMAGES' && view !== 'NEW_IMAGE')
    throw new InvalidExportManifestError(
      { key },
      `outputView ${JSON.stringify(view)} is not NEW_AND_OLD_IMAGES or NEW_IMAGE`,
    );
  return {
    key,
    exportArn: text(s, 'exportArn', key),
    // An incremental export's state is as of the end of its range.
    exportTime: epochMs(
      exportType === 'INCREMENTAL_EXPORT' ? (s.exportToTime ?? s.exportTime) : s.exportTime,
      key,
      'exportTime',
    ),
    tableArn: typeof s.tableArn === 'string' ? s.tableArn : undefined,
    itemCount: typeof s.itemCount === 'number' ? s.itemCount : undefined,
    exportType,
    view,
    manifestFilesKey: text(s, 'manifestFilesS3Key', key),
  };
}

/**
 * An export's two manifests: manifest-summary.json under `prefix` (the export's folder,
 * `…/AWSDynamoDB/<exportId>`), then the manifest-files.json it names, one data file per line.
 */
export async function readExportManifest(
  client: S3Client,
  bucket: string,
  prefix: string,
): Promise<ExportManifest> {
  const summary = await readExportSummary(client, bucket, summaryKeyOf(prefix));
  const listing = await readText(client, bucket, summary.manifestFilesKey, summary.key);
  const files: ExportDataFile[] = [];
  listing.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const entry = parseJson(line, summary.manifestFilesKey, i + 1);
    files.push({
      dataFileS3Key: text(entry, 'dataFileS3Key', summary.manifestFilesKey, i + 1),
      itemCount: typeof entry.itemCount === 'number' ? entry.itemCount : undefined,
      md5Checksum: typeof entry.md5Checksum === 'string' ? entry.md5Checksum : undefined,
      etag: typeof entry.etag === 'string' ? entry.etag : undefined,
    });
  });
  return { bucket, summary, files };
}
