import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArchiveKey } from '../../../src/archive/format.js';
import { decodeArchiveObject } from '../../../src/archive.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { ArchiveWriteError, FileSink } from '../../../src/sinks/index.js';
import { sampleTtlDeleteRecords, sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { runSinkTestKit } from '../../../src/sinks/testkit.js';

async function files(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

async function readBack(dir: string): Promise<string[]> {
  const seen = new Set<string>();
  const out: string[] = [];
  const first = (file: string) => BigInt(parseArchiveKey(file)?.first ?? 0);
  const all = (await files(dir)).sort((a, b) => (first(a) < first(b) ? -1 : 1));
  for (const file of all) {
    for (const row of decodeArchiveObject(await readFile(join(dir, file)), file)) {
      if (seen.has(row.sequenceNumber)) continue;
      seen.add(row.sequenceNumber);
      out.push(row.sequenceNumber);
    }
  }
  return out;
}

/** The key tag of a Lambda batch's object (no shard id): the first record's eventID, hashed. */
const tagOf = (eventID: string | undefined) =>
  createHash('sha256')
    .update(eventID ?? '')
    .digest('hex')
    .slice(0, 12);

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-file-sink-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

runSinkTestKit({
  name: 'FileSink',
  create: async () => new FileSink({ directory: await tempDir() }),
  read: (sink) => readBack(sink.directory),
});

describe('FileSink', () => {
  it('writes the S3 layout, atomically, with no temporary files left', async () => {
    const directory = await tempDir();
    const sink = new FileSink({ directory, prefix: 'arch' });
    const batch = sampleTtlDeletes(12, { spacingSeconds: 600 });
    expect(await sink.write(batch)).toEqual({});
    const written = await files(directory);
    expect(written).toEqual([
      `arch/table=archive-sample/dt=2026-01-15/hour=10/stream-2026-01-01T00_00_00.000/${batch[0]?.sequenceNumber}-${batch[5]?.sequenceNumber}-${tagOf(batch[0]?.eventID)}.ndjson.gz`,
      `arch/table=archive-sample/dt=2026-01-15/hour=11/stream-2026-01-01T00_00_00.000/${batch[6]?.sequenceNumber}-${batch[11]?.sequenceNumber}-${tagOf(batch[6]?.eventID)}.ndjson.gz`,
    ]);
    const rows = decodeArchiveObject(await readFile(join(directory, written[0] as string)), 'x');
    expect(rows.map((r) => r.oldImage)).toEqual(
      sampleTtlDeleteRecords(6, { spacingSeconds: 600 }).map((r) => r.dynamodb.OldImage),
    );
  });

  it('reports the records of a file it could not write', async () => {
    const directory = await tempDir();
    // A plain file where the table directory must go makes mkdir fail.
    await mkdir(join(directory), { recursive: true });
    await writeFile(join(directory, 'table=archive-sample'), 'in the way');
    const sink = new FileSink({ directory });
    const batch = sampleTtlDeletes(3);
    const result = await sink.write(batch);
    expect(result.failed?.map((f) => f.sequenceNumber)).toEqual(batch.map((r) => r.sequenceNumber));
    expect(result.failed?.[0]?.error).toBeInstanceOf(ArchiveWriteError);
  });

  it('rejects unknown and missing options', () => {
    expect(() => new FileSink({ directory: '/tmp/x', dir: 'y' } as never)).toThrow(InvalidOptionsError);
    expect(() => new FileSink({} as never)).toThrow(/directory/);
    expect(() => new FileSink({ directory: '/tmp/x', maxObjectBytes: 0 })).toThrow(/maxObjectBytes/);
  });
});
