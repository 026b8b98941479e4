import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CheckpointMismatchError,
  CorruptExportFileError,
  InvalidExportLineError,
  MissingExportFileError,
  runBackfill,
  UnsupportedExportFormatError,
} from '../../../src/backfill/index.js';
import { writeLocalExport } from '../../../src/local/export/index.js';
import { MemoryDeadLetterSink } from '../../../src/sinks/memory-dead-letter-sink.js';
import type { Sink } from '../../../src/sinks/types.js';
import { createTestBucket, createTestTable, localClients } from '../../support/aws.js';
import { fillWideItems, quietLogger, StateSink, tableState, wideItem } from '../../support/backfill-table.js';
import { gzLines, putExport } from './export-fixtures.js';

const { dynamodb, streams, s3 } = localClients();

/** Without a dead-letter sink (`deadLetter: null`) a record that keeps failing fails its batch, as in Lambda. */
function config(sink: Sink, deadLetter: MemoryDeadLetterSink | null = new MemoryDeadLetterSink()) {
  return {
    routes: [{ when: ['insert', 'modify', 'user-delete', 'ttl-delete'] as const, to: sink }],
    ...(deadLetter === null ? {} : { deadLetter }),
    metrics: false as const,
    logger: quietLogger,
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  };
}

let bucket: string;
let dir: string;
beforeAll(async () => {
  bucket = await createTestBucket(s3);
  dir = await mkdtemp(join(tmpdir(), 'tidewater-backfill-'));
});

describe('runBackfill from a local export', () => {
  let table: Awaited<ReturnType<typeof createTestTable>>;
  beforeAll(async () => {
    table = await createTestTable(dynamodb);
    await fillWideItems(dynamodb, table.tableName, 230);
  });
  afterAll(() => table.drop());

  // The local export writes what a real one does (md5Checksum, itemCount): every check passes.
  it('a full export reaches the sink whole and lossless, each record saying it came from the export', async () => {
    const exported = await writeLocalExport({
      dynamodb,
      s3,
      bucket,
      table: table.tableName,
      type: 'full',
      files: 3,
      prefix: 'exports',
    });
    const sink = new StateSink();
    const report = await runBackfill(config(sink), {
      source: { export: { bucket, prefix: exported.prefix } },
      s3,
      dynamodb,
      batchSize: 40,
    });
    expect(report).toMatchObject({
      itemsRead: 230,
      delivered: 230,
      deadLettered: 0,
      failed: 0,
      partsDone: 3,
      partsTotal: 3,
      complete: true,
    });
    expect(sink.state).toEqual(await tableState(dynamodb, table.tableName));
    expect([...sink.origins].map((o) => JSON.parse(o))).toEqual([
      { source: 'backfill', from: 'export', snapshotTime: exported.exportTime },
    ]);
  });

  it('a full export then an incremental one (inserts, updates, deletes) leave the sink equal to the table', async () => {
    const full = await writeLocalExport({ dynamodb, s3, bucket, table: table.tableName, type: 'full' });
    const sink = new StateSink();
    await runBackfill(config(sink), { source: { export: { bucket, prefix: full.prefix } }, s3, dynamodb });
    // DynamoDB Local stamps stream records to the minute: the range starts at this minute's start
    // (it may hold the fill's writes too; replaying them again leaves the same state).
    const from = Math.floor(Date.now() / 60_000) * 60_000;
    await dynamodb.send(new DeleteItemCommand({ TableName: table.tableName, Key: { pk: { S: 'item-3' } } }));
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: 'item-4' } },
        UpdateExpression: 'SET big = :b',
        ExpressionAttributeValues: { ':b': { N: '-99999999999999999999999999999999999999' } },
      }),
    );
    await dynamodb.send(new PutItemCommand({ TableName: table.tableName, Item: wideItem(1000) as never }));
    const incremental = await writeLocalExport({
      dynamodb,
      streams,
      s3,
      bucket,
      table: table.tableName,
      type: 'incremental',
      from,
      to: Date.now() + 2000,
    });
    const report = await runBackfill(config(sink), {
      source: { export: { bucket, prefix: incremental.prefix } },
      s3,
      dynamodb,
    });
    expect(report.complete).toBe(true);
    expect(report.itemsRead).toBeGreaterThanOrEqual(3);
    expect(sink.state).toEqual(await tableState(dynamodb, table.tableName));
    expect([...sink.origins].map((o) => JSON.parse(o).from)).toContain('incremental-export');
  });

  it('a parallel scan reaches the sink whole', async () => {
    const sink = new StateSink();
    const report = await runBackfill(config(sink), {
      source: { scan: { table: table.tableName, segments: 3, pageSize: 37 } },
      dynamodb,
      batchSize: 25,
    });
    expect(report).toMatchObject({
      partsDone: 3,
      partsTotal: 3,
      unit: 'segments',
      complete: true,
      failed: 0,
    });
    expect(sink.state).toEqual(await tableState(dynamodb, table.tableName));
    expect(report.itemsRead).toBe(sink.state.size);
  });

  for (const source of ['export', 'scan'] as const) {
    it(`a ${source} backfill stopped half-way resumes from its checkpoint to the same end state`, async () => {
      const checkpoint = join(dir, `${source}-resume.json`);
      const exported = await writeLocalExport({
        dynamodb,
        s3,
        bucket,
        table: table.tableName,
        type: 'full',
        files: 2,
      });
      const from =
        source === 'export'
          ? { export: { bucket, prefix: exported.prefix } }
          : { scan: { table: table.tableName, segments: 2, pageSize: 50 } };
      const broken = new StateSink(90);
      const first = await runBackfill(config(broken, null), {
        source: from,
        s3,
        dynamodb,
        checkpoint,
        batchSize: 20,
        concurrency: 1,
      });
      expect(first.complete).toBe(false);
      expect(first.failed).toBeGreaterThan(0);
      expect(first.errors[0]?.error).toMatch(/failed/);
      expect((await stat(checkpoint)).mode & 0o777).toBe(0o600);
      const second = new StateSink();
      const rest = await runBackfill(config(second), {
        source: from,
        s3,
        dynamodb,
        checkpoint,
        batchSize: 20,
        concurrency: 1,
      });
      expect(rest.complete).toBe(true);
      const union = new Map([...broken.state, ...second.state]);
      expect(union).toEqual(await tableState(dynamodb, table.tableName));
      // Resumed after what the first run finished: nothing delivered twice but the failed batch's own retries.
      expect(first.delivered + rest.delivered).toBe(union.size);
      const again = await runBackfill(config(new StateSink()), { source: from, s3, dynamodb, checkpoint });
      expect(again).toMatchObject({ itemsRead: 0, complete: true });
    });
  }
});

describe('bad export input: a typed error naming the file and line', () => {
  const item = (pk: string) => JSON.stringify({ Item: { pk: { S: pk }, n: { N: '1' } } });

  async function run(prefix: string, sink = new StateSink(), deadLetter = new MemoryDeadLetterSink()) {
    return runBackfill(config(sink, deadLetter), {
      source: { export: { bucket, prefix } },
      s3,
      keyAttributes: ['pk'],
    });
  }

  it('a truncated gzip: the lines before the cut are delivered, the file is reported with the line it broke on', async () => {
    const whole = gzLines([item('a'), item('b'), item('c')]);
    const { prefix, keys } = await putExport(s3, bucket, [whole.subarray(0, whole.length - 12)], {}, (l) => ({
      ...l,
      itemCount: 3,
    }));
    const sink = new StateSink();
    const report = await run(prefix, sink);
    expect(report.complete).toBe(false);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]!.part).toBe(keys[0]);
    expect(report.errors[0]!.error).toMatch(new RegExp(`^CorruptExportFileError: ${keys[0]} line \\d`));
    void CorruptExportFileError;
  });

  it('a line that is not JSON names its file and line; the good file beside it completes', async () => {
    const { prefix, keys } = await putExport(s3, bucket, [
      gzLines([item('a'), '{"Item": {"pk"', item('c')]),
      gzLines([item('d')]),
    ]);
    const sink = new StateSink();
    const report = await run(prefix, sink);
    expect(report.errors).toEqual([
      {
        part: keys[0],
        error: `InvalidExportLineError: ${keys[0]} line 2: not JSON (a data file holds one JSON object per line)`,
      },
    ]);
    expect(report.partsDone).toBe(1);
    expect([...sink.state.keys()].sort()).toEqual(['{"pk":{"S":"a"}}', '{"pk":{"S":"d"}}']);
    void InvalidExportLineError;
  });

  it('a manifest naming a missing file', async () => {
    const { prefix, keys } = await putExport(s3, bucket, [gzLines([item('a')])]);
    const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: keys[0] }));
    const report = await run(prefix);
    expect(report.errors[0]!.error).toMatch(
      /^MissingExportFileError: .*data\/file0\.json\.gz: no such object/,
    );
    void MissingExportFileError;
  });

  it('an ION export is refused before anything runs', async () => {
    const { prefix } = await putExport(s3, bucket, [gzLines([item('a')])], { outputFormat: 'ION' });
    await expect(run(prefix)).rejects.toBeInstanceOf(UnsupportedExportFormatError);
  });

  it('a checkpoint of another export is refused', async () => {
    const checkpoint = join(dir, 'other.json');
    const a = await putExport(s3, bucket, [gzLines([item('a')])]);
    const b = await putExport(s3, bucket, [gzLines([item('b')])]);
    await runBackfill(config(new StateSink()), {
      source: { export: { bucket, prefix: a.prefix } },
      s3,
      keyAttributes: ['pk'],
      checkpoint,
    });
    await expect(
      runBackfill(config(new StateSink()), {
        source: { export: { bucket, prefix: b.prefix } },
        s3,
        keyAttributes: ['pk'],
        checkpoint,
      }),
    ).rejects.toBeInstanceOf(CheckpointMismatchError);
    expect(JSON.parse(await readFile(checkpoint, 'utf8')).source).toMatch(/^export arn:/);
  });

  it('malformed items are dead-lettered with the file and line they were read from, the rest delivered', async () => {
    const { prefix, keys } = await putExport(s3, bucket, [
      gzLines([
        item('a'),
        JSON.stringify({ Item: { pk: { S: 'b' }, n: { N: 'twelve' } } }),
        JSON.stringify({ Item: { other: { S: 'x' } } }),
        JSON.stringify({ NotItem: 1 }),
        item('e'),
      ]),
    ]);
    const sink = new StateSink();
    const deadLetter = new MemoryDeadLetterSink();
    const report = await run(prefix, sink, deadLetter);
    expect(report).toMatchObject({ itemsRead: 5, delivered: 2, deadLettered: 3, complete: true });
    expect(deadLetter.entries.map((e) => [e.reason, e.eventID])).toEqual([
      ['malformed', `${keys[0]}#2`],
      ['malformed', `${keys[0]}#3`],
      ['malformed', `${keys[0]}#4`],
    ]);
  });
});
