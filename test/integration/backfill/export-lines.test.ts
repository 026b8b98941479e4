import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { exportLineRuns } from '../../../src/backfill/export-lines.js';
import {
  ExportFileInflationError,
  ExportFileMismatchError,
  ExportLineTooLongError,
  runBackfill,
} from '../../../src/backfill/index.js';
import { MAX_LINE_CHARS } from '../../../src/backfill/limits.js';
import { MemoryDeadLetterSink } from '../../../src/sinks/memory-dead-letter-sink.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { quietLogger, StateSink } from '../../support/backfill-table.js';
import { gzLines, manifestLine, putExport } from './export-fixtures.js';

const { s3 } = localClients();
const item = (pk: string) => JSON.stringify({ Item: { pk: { S: pk } } });

let bucket: string;
beforeAll(async () => {
  bucket = await createTestBucket(s3);
});

async function run(prefix: string, sink = new StateSink()) {
  return runBackfill(
    {
      routes: [{ when: 'insert', to: sink }],
      deadLetter: new MemoryDeadLetterSink(),
      metrics: false,
      logger: quietLogger,
    },
    { source: { export: { bucket, prefix } }, s3, keyAttributes: ['pk'], batchSize: 2 },
  );
}

describe('each data file is checked against its manifest line as it streams', () => {
  it("a file whose MD5 is not the manifest's is an ExportFileMismatchError naming it; the run is not complete", async () => {
    const body = gzLines([item('a'), item('b'), item('c')]);
    const { prefix, keys } = await putExport(s3, bucket, [body], {}, (l) => ({
      ...l,
      md5Checksum: manifestLine('x', gzLines([item('z')])).md5Checksum,
    }));
    const report = await run(prefix);
    expect(report.complete).toBe(false);
    expect(report.partsDone).toBe(0);
    expect(report.errors).toEqual([
      {
        part: keys[0],
        error: expect.stringMatching(new RegExp(`^ExportFileMismatchError: ${keys[0]}: its MD5 is `)),
      },
    ]);
    void ExportFileMismatchError;
  });

  it('a file holding fewer items than its itemCount, or more, is refused; more at the first extra item', async () => {
    const fewer = await putExport(s3, bucket, [gzLines([item('a'), item('b')])], { itemCount: 3 }, (l) => ({
      ...l,
      itemCount: 3,
    }));
    const report = await run(fewer.prefix);
    expect(report.complete).toBe(false);
    expect(report.errors[0]?.error).toMatch(
      /ExportFileMismatchError: .*: it holds 2 items, not what its manifest says \(itemCount\)/,
    );

    const sink = new StateSink();
    const more = await putExport(
      s3,
      bucket,
      [gzLines([item('a'), item('b'), item('c'), item('d'), item('e')])],
      { itemCount: 2 },
      (l) => ({
        ...l,
        itemCount: 2,
      }),
    );
    const over = await run(more.prefix, sink);
    expect(over.errors[0]?.error).toMatch(/it holds more than 2 items \(line 3\)/);
    // Only the items the manifest accounts for could reach the sink (batches of 2).
    expect(sink.state.size).toBeLessThanOrEqual(2);
  });
});

describe('bounds: typed errors in bounded time and memory', () => {
  it('a line longer than a 400 KB item can make is an ExportLineTooLongError naming file and line', async () => {
    const long = JSON.stringify({ Item: { pk: { S: 'x'.repeat(MAX_LINE_CHARS) } } });
    const { prefix, keys } = await putExport(s3, bucket, [gzLines([item('a'), long])]);
    const report = await run(prefix);
    expect(report.errors).toEqual([
      {
        part: keys[0],
        error: expect.stringMatching(new RegExp(`^ExportLineTooLongError: ${keys[0]} line 2: longer than`)),
      },
    ]);
    void ExportLineTooLongError;
  });

  it('a gzip bomb of one line stops at the line bound, memory bounded', async () => {
    // 64 MiB of one character gzips to about 64 KB; the reader must never hold the line.
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x61), { level: 9 });
    const { prefix, keys } = await putExport(s3, bucket, [bomb], { itemCount: 1 }, (l) => ({
      ...l,
      itemCount: 1,
    }));
    const before = process.memoryUsage().heapUsed;
    const report = await run(prefix);
    expect(report.errors[0]).toEqual({
      part: keys[0],
      error: expect.stringMatching(/^ExportLineTooLongError: .* line 1:/),
    });
    // The line bound is 13 MiB of characters: the heap never holds the 64 MiB line (128 MiB as UTF-16).
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('a gzip bomb of short lines is an ExportFileInflationError past the ratio', async () => {
    // 24 MiB of 1 KiB lines of one character: about 1000 times smaller gzipped.
    const bomb = gzipSync(Buffer.from(`${'x'.repeat(1023)}\n`.repeat(24 * 1024)), { level: 9 });
    const lines: number[] = [];
    const error = await (async () => {
      const { keys } = await putExport(s3, bucket, [bomb]);
      for await (const run of exportLineRuns(s3, bucket, keys[0]!, { maxInflateRatio: 250 }))
        for (const l of run) lines.push(l.line);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExportFileInflationError);
    // Stopped soon after the first 16 MiB: before the file's last line.
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThan(24 * 1024);
  });

  it('255 KB of empty lines completes and counts every line (the splitter is linear)', async () => {
    const body = gzipSync(Buffer.from(`${item('a')}\n${'\n'.repeat(255 * 1024)}${item('b')}\n`));
    const { prefix, keys } = await putExport(s3, bucket, [body]);
    let count = 0;
    let last = 0;
    for await (const run of exportLineRuns(s3, bucket, keys[0]!, { maxInflateRatio: 250, itemCount: 2 }))
      for (const l of run) {
        count++;
        last = l.line;
      }
    expect({ count, last }).toEqual({ count: 255 * 1024 + 2, last: 255 * 1024 + 2 });
    expect(await run(prefix)).toMatchObject({ itemsRead: 2, delivered: 2, complete: true });
  });

  it('a file of random bytes is a CorruptExportFileError, never a raw error', async () => {
    const { prefix } = await putExport(s3, bucket, [randomBytes(4096)], { itemCount: 0 }, (l) => ({
      ...l,
      itemCount: 0,
    }));
    const report = await run(prefix);
    expect(report.errors[0]?.error).toMatch(/^CorruptExportFileError: /);
  });
});
