import type { S3Client } from '@aws-sdk/client-s3';
import {
  type BackfillExportFileOptions,
  backfillExportFile,
  type ExportFileReport,
} from '../backfill/index.js';
import { dataFileKeyProblem } from '../backfill/manifest.js';
import { defineEnvironment, defineOptions, type Environment } from '../core/options.js';
import type { Pipeline } from '../pipeline/engine.js';
import { pipelineOfHandler } from '../pipeline/middleware.js';
import { createArchiveClients, createArchiveHandler, readArchiveConfig } from './archive-ttl.js';
import { BackfillFileIncompleteError } from './backfill-incomplete.js';
import { HandlerConfigError } from './config-error.js';
import { KEY_PREFIX_OPTION } from './key-prefix.js';

export { BackfillFileIncompleteError };

/**
 * What infra/backfill-map.asl.json's ItemSelector gives each child: one line of the export's
 * manifest-files.json (its key and its place in the file) and the export's type and time, which
 * the execution's input carries.
 */
export interface BackfillFileEvent {
  bucket: string;
  /** manifest-files.json's `dataFileS3Key`. */
  key: string;
  /** The line's index in manifest-files.json: keeps sequence numbers distinct across files. */
  fileIndex: number;
  exportType: 'FULL_EXPORT' | 'INCREMENTAL_EXPORT';
  /** Epoch milliseconds. */
  exportTime: number;
  /** manifest-files.json's `md5Checksum`: the file is checked against it as it streams. */
  md5Checksum: string;
  /** manifest-files.json's `itemCount`: the file's items are counted against it as it streams. */
  itemCount: number;
}

const readEvent = /* @__PURE__ */ defineOptions<BackfillFileEvent>()('backfillExportFile event', {
  bucket: { kind: 'nonEmptyString', required: true },
  key: { kind: 'nonEmptyString', required: true },
  fileIndex: { kind: 'integer', min: 0, max: 999_999, required: true },
  exportType: { kind: 'enum', values: ['FULL_EXPORT', 'INCREMENTAL_EXPORT'], required: true },
  exportTime: { kind: 'integer', min: 0, required: true, why: 'epoch milliseconds (a number)' },
  md5Checksum: { kind: 'nonEmptyString', required: true },
  itemCount: { kind: 'integer', min: 0, required: true },
});

export interface BackfillFileConfig {
  /** The table's key attributes (partition, then sort key): a full export's lines hold items alone. */
  keyAttributes: readonly string[];
  /** Only data files under this prefix are read: the role may read nothing else. */
  exportPrefix: string;
}

const readEnvironment = /* @__PURE__ */ defineEnvironment<{ KEY_ATTRIBUTES: string; EXPORT_PREFIX?: string }>(
  {
    error: (message, variable) => new HandlerConfigError(variable ?? '', message),
  },
)('backfillExportFile', {
  KEY_ATTRIBUTES: {
    kind: 'custom',
    expected: 'one or two attribute names separated by a comma (partition key first)',
    check: (v) => typeof v === 'string' && /^[^,\s]+(,[^,\s]+)?$/.test(v.trim()),
    required: true,
  },
  EXPORT_PREFIX: { ...KEY_PREFIX_OPTION, default: 'exports/' },
});

export function readBackfillFileConfig(env: Environment): BackfillFileConfig {
  const e = readEnvironment(env);
  return { keyAttributes: e.KEY_ATTRIBUTES.trim().split(','), exportPrefix: e.EXPORT_PREFIX };
}

/**
 * One child of the backfill's Distributed Map: backfills the data file its event names through
 * `pipeline` and returns the file's report (SUCCEEDED_n.json holds it). A file that stops short
 * throws BackfillFileIncompleteError, so the child fails and FAILED_n.json names it.
 */
export function createBackfillFileHandler(
  pipeline: Pipeline,
  config: BackfillFileConfig,
  options: Pick<BackfillExportFileOptions, 'client' | 'batchSize'> & { client: S3Client },
) {
  return async (event: unknown): Promise<ExportFileReport> => {
    const e = readEvent(event);
    if (!e.key.startsWith(config.exportPrefix))
      throw readEvent.fail(`key is outside the export prefix ${JSON.stringify(config.exportPrefix)}`, 'key');
    const problem = dataFileKeyProblem(e.key);
    if (problem !== undefined) throw readEvent.fail(`key ${problem}`, 'key');
    const report = await backfillExportFile(
      pipeline,
      {
        bucket: e.bucket,
        key: e.key,
        exportType: e.exportType,
        exportTime: e.exportTime,
        keyAttributes: config.keyAttributes,
        md5Checksum: e.md5Checksum,
        itemCount: e.itemCount,
      },
      { ...options, fileIndex: e.fileIndex },
    );
    if (!report.complete)
      throw new BackfillFileIncompleteError(report.key, report.line, report.failed, report.error);
    return report;
  };
}

/** archiveTtl's own pipeline, from the same settings: the backfill archives what the stream would. */
function archivePipeline(env: Environment, clients: ReturnType<typeof createArchiveClients>): Pipeline {
  const pipeline = pipelineOfHandler(createArchiveHandler(readArchiveConfig(env), clients));
  // createArchiveHandler is a createStreamHandler: it always carries its pipeline.
  if (pipeline === undefined)
    throw new HandlerConfigError('', 'backfillExportFile: the archive handler has no pipeline');
  return pipeline;
}

// Built once per container: config errors fail the init, and clients are reused by warm invocations.
const clients = createArchiveClients();
export const handler = createBackfillFileHandler(
  archivePipeline(process.env, clients),
  readBackfillFileConfig(process.env),
  { client: clients.s3 },
);
