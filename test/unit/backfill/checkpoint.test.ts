import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkpointWriter, openCheckpoint } from '../../../src/backfill/checkpoint.js';
import { CheckpointMismatchError, InvalidCheckpointError } from '../../../src/backfill/errors.js';

async function temp(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'tidewater-checkpoint-')), 'cp.json');
}

describe('backfill checkpoint', () => {
  it('is fresh when the file does not exist, and reads back what was saved (mode 0600, last save wins)', async () => {
    const file = await temp();
    const cp = await openCheckpoint(file, 'export arn:x');
    expect(cp).toEqual({ version: 1, source: 'export arn:x', files: {}, segments: {} });
    const writer = checkpointWriter(file, cp);
    cp.files['data/a.json.gz'] = { line: 10, done: false };
    const first = writer.save();
    cp.files['data/a.json.gz'] = { line: 20, done: true };
    cp.segments['0'] = { after: { pk: { S: 'k' } }, items: 3, done: false };
    await Promise.all([first, writer.save()]);
    expect(await openCheckpoint(file, 'export arn:x')).toEqual(cp);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it("another source's checkpoint is a CheckpointMismatchError; a file that is not one an InvalidCheckpointError", async () => {
    const file = await temp();
    await checkpointWriter(file, await openCheckpoint(file, 'scan t segments 4')).save();
    await expect(openCheckpoint(file, 'scan t segments 8')).rejects.toBeInstanceOf(CheckpointMismatchError);
    await writeFile(file, '{"version": 2}');
    await expect(openCheckpoint(file, 'scan t segments 4')).rejects.toBeInstanceOf(InvalidCheckpointError);
    await writeFile(file, 'not json');
    await expect(openCheckpoint(file, 'scan t segments 4')).rejects.toThrow(/not JSON/);
    expect(await readFile(file, 'utf8')).toBe('not json');
  });

  it('without a file nothing is written', async () => {
    const cp = await openCheckpoint(undefined, 's');
    await expect(checkpointWriter(undefined, cp).save()).resolves.toBeUndefined();
  });
});
