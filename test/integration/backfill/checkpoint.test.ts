import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidCheckpointError, runBackfill } from '../../../src/backfill/index.js';
import { MemoryDeadLetterSink } from '../../../src/sinks/memory-dead-letter-sink.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { quietLogger, StateSink } from '../../support/backfill-table.js';
import { gzLines, putExport } from './export-fixtures.js';

const { s3 } = localClients();
const item = (pk: string) => JSON.stringify({ Item: { pk: { S: pk } } });

let bucket: string;
let dir: string;
beforeAll(async () => {
  bucket = await createTestBucket(s3);
  dir = await mkdtemp(join(tmpdir(), 'tidewater-backfill-checkpoint-'));
});

function run(prefix: string, checkpoint: string, sink: StateSink) {
  return runBackfill(
    {
      routes: [{ when: 'insert', to: sink }],
      deadLetter: new MemoryDeadLetterSink(),
      metrics: false,
      logger: quietLogger,
    },
    { source: { export: { bucket, prefix } }, s3, keyAttributes: ['pk'], checkpoint, batchSize: 1 },
  );
}

/** A checkpoint of the export at `prefix` with `files` as given (what a first run wrote, then edited). */
async function checkpointOf(
  prefix: string,
  name: string,
  files: (keys: string[]) => Record<string, unknown>,
  keys: string[],
) {
  const file = join(dir, name);
  await run(prefix, file, new StateSink());
  const written = JSON.parse(await readFile(file, 'utf8'));
  await writeFile(file, JSON.stringify({ ...written, files: files(keys) }));
  return file;
}

describe('a checkpoint is checked before any delivery', () => {
  for (const [what, entry] of [
    ['"oops"', 'oops'],
    ['false', false],
    ['a line of the wrong type', { line: 'x', done: false }],
  ] as const) {
    it(`an entry ${what} is an InvalidCheckpointError; nothing reaches the sink`, async () => {
      const { prefix, keys } = await putExport(s3, bucket, [gzLines([item('a')]), gzLines([item('b')])]);
      const file = await checkpointOf(
        prefix,
        `bad-${keys.length}-${String(entry)}.json`,
        (k) => ({ [k[0]!]: entry }),
        keys,
      );
      const sink = new StateSink();
      await expect(run(prefix, file, sink)).rejects.toBeInstanceOf(InvalidCheckpointError);
      expect(sink.state.size).toBe(0);
    });
  }

  it('a line past the end of its file is a CheckpointPastEndError; the run is not complete', async () => {
    const { prefix, keys } = await putExport(s3, bucket, [gzLines([item('a'), item('b')])]);
    const file = await checkpointOf(
      prefix,
      'past-end.json',
      (k) => ({ [k[0]!]: { line: 9, done: false } }),
      keys,
    );
    const sink = new StateSink();
    const report = await run(prefix, file, sink);
    expect(report.complete).toBe(false);
    expect(report.errors).toEqual([
      {
        part: keys[0],
        error: `CheckpointPastEndError: ${keys[0]}: the checkpoint says line 9 is done, but the file has 2 lines; delete the checkpoint to start over`,
      },
    ]);
    expect(sink.state.size).toBe(0);
  });

  it('a checkpoint naming a file the manifest does not list is refused', async () => {
    const { prefix, keys } = await putExport(s3, bucket, [gzLines([item('a')])]);
    const file = await checkpointOf(
      prefix,
      'stray.json',
      () => ({ 'other/data/x.json.gz': { line: 0, done: false } }),
      keys,
    );
    await expect(run(prefix, file, new StateSink())).rejects.toThrow(
      /a file the export's manifest does not list/,
    );
  });
});
