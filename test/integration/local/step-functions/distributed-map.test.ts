// biome-ignore-all lint/suspicious/noExplicitAny: definitions and result files are untyped JSON
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { writeLocalExport } from '../../../../src/local/export/index.js';
import { runDistributedMap } from '../../../../src/local/step-functions/index.js';
import { createPipeline } from '../../../../src/pipeline/engine.js';
import { MemoryDeadLetterSink } from '../../../../src/sinks/memory-dead-letter-sink.js';
import { createTestBucket, createTestTable, localClients, startLocalSqs } from '../../../support/aws.js';
import { fillWideItems, quietLogger, StateSink, tableState } from '../../../support/backfill-table.js';

// The deployed definition (infra/backfill-map.asl.json) run by the local Map runner over a local
// export of a DynamoDB Local table, each child the backfill handler over one data file.

const { dynamodb, s3, s3Endpoint } = localClients();
const definition = new URL('../../../../infra/backfill-map.asl.json', import.meta.url);
const FUNCTION_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:backfillExportFile';

type HandlerModule = typeof import('../../../../src/handlers/backfill-export-file.js');
let handlers: HandlerModule;

async function readJson(bucket: string, key: string): Promise<any> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return JSON.parse(await object.Body!.transformToString('utf8'));
}

let bucket: string;
let table: Awaited<ReturnType<typeof createTestTable>>;
const ITEMS = 120;

beforeAll(async () => {
  // The handler module builds the deployed function at import: give it its settings first.
  vi.stubEnv('ARCHIVE_BUCKET', 'unused-by-these-tests');
  vi.stubEnv('TTL_ATTRIBUTE', 'expiresAt');
  vi.stubEnv('DEAD_LETTER_QUEUE_URL', 'http://127.0.0.1:1/queue/unused');
  vi.stubEnv('KEY_ATTRIBUTES', 'pk');
  handlers = await import('../../../../src/handlers/backfill-export-file.js');
  vi.unstubAllEnvs();
  bucket = await createTestBucket(s3);
  table = await createTestTable(dynamodb);
  await fillWideItems(dynamodb, table.tableName, ITEMS);
});
afterAll(() => table.drop());

/** One export (4 data files), the Map's input for it, and a child over a fresh sink. */
async function exportAndChild() {
  const exported = await writeLocalExport({
    dynamodb,
    s3,
    bucket,
    table: table.tableName,
    type: 'full',
    files: 4,
    prefix: 'exports',
  });
  const sink = new StateSink();
  const deadLetter = new MemoryDeadLetterSink();
  const pipeline = createPipeline({
    routes: [{ when: ['insert'], to: sink }],
    deadLetter,
    metrics: false,
    logger: quietLogger,
  });
  const child = handlers.createBackfillFileHandler(
    pipeline,
    { keyAttributes: ['pk'], exportPrefix: 'exports/' },
    { client: s3 },
  );
  const input = {
    manifestFilesKey: `${exported.prefix}/manifest-files.json`,
    exportType: 'FULL_EXPORT',
    exportTime: exported.exportTime,
  };
  return { exported, sink, deadLetter, child, input };
}

const substitutions = () => ({
  BackfillFunctionArn: FUNCTION_ARN,
  ExportBucket: bucket,
  ResultsBucket: bucket,
  ResultsPrefix: 'backfill-results/',
});

describe('the backfill state machine, run locally', () => {
  it('backfills every data file: the sink holds exactly the table, results in the ResultWriter layout', async () => {
    const { exported, sink, deadLetter, child, input } = await exportAndChild();
    const run = await runDistributedMap({
      definition,
      substitutions: substitutions(),
      input,
      s3,
      functions: { [FUNCTION_ARN]: child },
    });
    expect(run.status).toBe('SUCCEEDED');
    expect(run.items).toEqual({ succeeded: 4, failed: 0, pending: 0 });
    expect(sink.state).toEqual(await tableState(dynamodb, table.tableName));
    expect(deadLetter.entries).toHaveLength(0);

    const runId = run.mapRunArn.split(':').pop();
    expect(run.output.ResultWriterDetails).toEqual({
      Bucket: bucket,
      Key: `backfill-results/${runId}/manifest.json`,
    });
    const manifest = await readJson(bucket, run.output.ResultWriterDetails!.Key);
    expect(manifest.DestinationBucket).toBe(bucket);
    expect(manifest.MapRunArn).toBe(run.mapRunArn);
    expect(manifest.ResultFiles.FAILED).toEqual([]);
    expect(manifest.ResultFiles.PENDING).toEqual([]);
    expect(manifest.ResultFiles.SUCCEEDED).toHaveLength(1);
    expect(manifest.ResultFiles.SUCCEEDED[0].Key).toBe(`backfill-results/${runId}/SUCCEEDED_0.json`);
    const succeeded = await readJson(bucket, manifest.ResultFiles.SUCCEEDED[0].Key);
    // Each child's Input is what the ItemSelector made of one manifest-files.json line.
    const inputs = succeeded.map((e: { Input: string }) => JSON.parse(e.Input));
    expect(inputs.map((i: { key: string }) => i.key).sort()).toEqual([...exported.dataFiles].sort());
    expect(inputs.map((i: { fileIndex: number }) => i.fileIndex).sort()).toEqual([0, 1, 2, 3]);
    for (const i of inputs)
      expect(i).toMatchObject({ bucket, exportType: 'FULL_EXPORT', exportTime: exported.exportTime });
    // The manifest line's checksum and count reach the child, which checks the file against them.
    for (const i of inputs) expect(i.md5Checksum).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(inputs.reduce((sum: number, i: { itemCount: number }) => sum + i.itemCount, 0)).toBe(ITEMS);
    const reports = succeeded.map((e: { Output: string; Status: string }) => {
      expect(e.Status).toBe('SUCCEEDED');
      return JSON.parse(e.Output);
    });
    expect(reports.reduce((sum: number, r: { delivered: number }) => sum + r.delivered, 0)).toBe(ITEMS);
  });

  it("a data file whose bytes are not the manifest line's fails its child, naming the file", async () => {
    const { exported, child, input } = await exportAndChild();
    const [first, swapped] = exported.dataFiles as [string, string];
    const bytes = await (
      await s3.send(new GetObjectCommand({ Bucket: bucket, Key: first }))
    ).Body!.transformToByteArray();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: swapped, Body: bytes }));

    const run = await runDistributedMap({
      definition,
      substitutions: substitutions(),
      input,
      s3,
      functions: { [FUNCTION_ARN]: child },
      maxConcurrency: 1,
    });
    expect(run.status).toBe('FAILED');
    const manifest = await readJson(bucket, run.output.ResultWriterDetails!.Key);
    const failed = await readJson(bucket, manifest.ResultFiles.FAILED[0].Key);
    expect(failed).toHaveLength(1);
    expect(JSON.parse(failed[0].Input).key).toBe(swapped);
    expect(JSON.parse(failed[0].Cause).errorMessage).toContain(swapped);
  });

  it('a child refuses a key that is not a data file of an export, as runBackfill refuses the manifest line', async () => {
    const { child, exported, sink } = await exportAndChild();
    const event = {
      bucket,
      fileIndex: 0,
      exportType: 'FULL_EXPORT',
      exportTime: exported.exportTime,
      md5Checksum: 'AAAAAAAAAAAAAAAAAAAAAA==',
      itemCount: 0,
    };
    const folder = exported.dataFiles[0]!.slice(0, exported.dataFiles[0]!.lastIndexOf('/data/'));
    for (const key of [
      `exports/../elsewhere/AWSDynamoDB/x/data/f.json.gz`,
      `${folder}/data/../manifest-files.json`,
      `${folder}/data//f.json.gz`,
      `${folder}/manifest-files.json`,
      `${folder}/data/f\u0000.json.gz`,
    ]) {
      await expect(child({ ...event, key }), key).rejects.toThrow(
        /export's data\/ folder|'\.\.' segment|control character/,
      );
    }
    expect(sink.state.size).toBe(0);
  });

  it('a data file that cannot be read fails its child: the run fails at 0% tolerated, not at 25%', async () => {
    const { exported, child, input, sink } = await exportAndChild();
    const missing = exported.dataFiles[2]!;
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: missing }));

    const strict = await runDistributedMap({
      definition,
      substitutions: substitutions(),
      input,
      s3,
      functions: { [FUNCTION_ARN]: child },
      maxConcurrency: 1,
    });
    expect(strict.status).toBe('FAILED');
    expect(strict.error).toBe('States.ExceedToleratedFailureThreshold');
    const manifest = await readJson(bucket, strict.output.ResultWriterDetails!.Key);
    const failed = await readJson(bucket, manifest.ResultFiles.FAILED[0].Key);
    expect(failed).toHaveLength(1);
    expect(JSON.parse(failed[0].Input).key).toBe(missing);
    expect(failed[0]).toMatchObject({ Status: 'FAILED', Error: 'MissingExportFileError' });
    expect(JSON.parse(failed[0].Cause).errorMessage).toContain(missing);
    // One at a time, in order: the files after the failed one were never started.
    expect(strict.items).toEqual({ succeeded: 2, failed: 1, pending: 1 });
    expect(manifest.ResultFiles.PENDING).toHaveLength(1);

    // 1 failed file of 4 is 25%: tolerated at 25 (the run fails only when the share exceeds it).
    const tolerant = JSON.parse(await (await import('node:fs/promises')).readFile(definition, 'utf8'));
    tolerant.States.BackfillDataFiles.ToleratedFailurePercentage = 25;
    const run = await runDistributedMap({
      definition: tolerant,
      substitutions: substitutions(),
      input,
      s3,
      functions: { [FUNCTION_ARN]: child },
    });
    expect(run.status).toBe('SUCCEEDED');
    expect(run.items).toEqual({ succeeded: 3, failed: 1, pending: 0 });
    // Every item of the three readable files reached the sink.
    const readable = [...(await tableState(dynamodb, table.tableName)).keys()].length;
    expect(sink.state.size).toBeLessThan(readable);
    expect(sink.state.size).toBeGreaterThan(0);
  });

  it("runs the deployed handler module, loaded as `tidewater start` loads one, over archiveTtl's pipeline", async () => {
    const { exported, input } = await exportAndChild();
    const local = await startLocalSqs();
    try {
      const queue = await local.sqs.send(new CreateQueueCommand({ QueueName: 'backfill-dead-letters' }));
      // archiveTtl's routes take deletes: a full export's inserts are dead-lettered, as the stream's would be.
      vi.stubEnv('ARCHIVE_BUCKET', bucket);
      vi.stubEnv('TTL_ATTRIBUTE', 'expiresAt');
      vi.stubEnv('DEAD_LETTER_QUEUE_URL', queue.QueueUrl!);
      // What connectLocalAws sets for a function run locally (`tidewater start`).
      vi.stubEnv('AWS_ENDPOINT_URL_SQS', local.server.endpoint);
      vi.stubEnv('AWS_ENDPOINT_URL_S3', s3Endpoint);
      vi.stubEnv('AWS_S3_FORCE_PATH_STYLE', 'true');
      vi.stubEnv('AWS_REQUEST_CHECKSUM_CALCULATION', 'WHEN_REQUIRED');
      vi.stubEnv('AWS_RESPONSE_CHECKSUM_VALIDATION', 'WHEN_REQUIRED');
      vi.stubEnv('KEY_ATTRIBUTES', 'pk');
      vi.stubEnv('EXPORT_PREFIX', 'exports/');
      const run = await runDistributedMap({
        definition,
        substitutions: substitutions(),
        input,
        s3,
        functions: {
          [FUNCTION_ARN]: {
            handler: 'src/handlers/backfill-export-file.handler',
            root: new URL('../../../../', import.meta.url).pathname,
            timeoutSeconds: 60,
          },
        },
      });
      expect(run.children.map((c) => c.cause)).toEqual([undefined, undefined, undefined, undefined]);
      expect(run.status).toBe('SUCCEEDED');
      const reports = run.children.map((c) => c.output as { itemsRead: number; deadLettered: number });
      expect(reports.reduce((sum, r) => sum + r.itemsRead, 0)).toBe(exported.itemCount);
      expect(reports.reduce((sum, r) => sum + r.deadLettered, 0)).toBe(exported.itemCount);
      expect(local.server.messages('backfill-dead-letters').length).toBeGreaterThan(0);
    } finally {
      vi.unstubAllEnvs();
      await local.stop();
    }
  });

  it('batches items per ItemBatcher, with its BatchInput', async () => {
    const key = 'batcher/items.jsonl';
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: [1, 2, 3, 4, 5].map((n) => JSON.stringify({ n })).join('\n'),
      }),
    );
    const seen: unknown[] = [];
    const run = await runDistributedMap({
      definition: {
        StartAt: 'M',
        States: {
          M: {
            Type: 'Map',
            ItemReader: {
              Resource: 'arn:aws:states:::s3:getObject',
              ReaderConfig: { InputType: 'JSONL' },
              Parameters: { Bucket: bucket, 'Key.$': '$.key' },
            },
            ItemBatcher: { MaxItemsPerBatch: 2, BatchInput: { 'tag.$': '$.tag' } },
            ItemProcessor: {
              ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'EXPRESS' },
              StartAt: 'T',
              States: { T: { Type: 'Task', Resource: FUNCTION_ARN, End: true } },
            },
            End: true,
          },
        },
      },
      input: { key, tag: 'x' },
      s3,
      functions: { [FUNCTION_ARN]: (event: never) => void seen.push(event) },
    });
    expect(run.status).toBe('SUCCEEDED');
    expect(run.output.ResultWriterDetails).toBeUndefined();
    expect(seen).toEqual([
      { Items: [{ n: 1 }, { n: 2 }], BatchInput: { tag: 'x' } },
      { Items: [{ n: 3 }, { n: 4 }], BatchInput: { tag: 'x' } },
      { Items: [{ n: 5 }], BatchInput: { tag: 'x' } },
    ]);
    expect(run.items).toEqual({ succeeded: 5, failed: 0, pending: 0 });
  });
});
