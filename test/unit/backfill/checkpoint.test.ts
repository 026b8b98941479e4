import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkExportCheckpoint,
  checkpointWriter,
  checkScanCheckpoint,
  openCheckpoint,
} from '../../../src/backfill/checkpoint.js';
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

  it('an entry of the wrong type is an InvalidCheckpointError when it is opened, before anything runs', async () => {
    const file = await temp();
    const bad: unknown[] = [
      { files: { k: 'oops' } },
      { files: { k: false } },
      { files: { k: { line: '3', done: false } } },
      { files: { k: { line: -1, done: false } } },
      { files: { k: { line: 1.5, done: false } } },
      { files: { k: { line: 3, done: 'no' } } },
      { files: [] },
      { segments: { '0': { after: 'k', items: 0, done: false } } },
      { segments: { x: { after: null, items: 0, done: false } } },
      { segments: { '0': { after: null, items: null, done: false } } },
    ];
    for (const patch of bad) {
      await writeFile(
        file,
        JSON.stringify({ version: 1, source: 's', files: {}, segments: {}, ...(patch as object) }),
      );
      await expect(openCheckpoint(file, 's')).rejects.toBeInstanceOf(InvalidCheckpointError);
    }
  });

  it('`__proto__` is an entry like any other: Object.prototype is untouched, the entry reads back', async () => {
    const file = await temp();
    const name = '__proto__';
    const cp = await openCheckpoint(file, 's');
    cp.files[name] ??= { line: 0, done: false };
    cp.files[name].line = 7;
    expect(Object.prototype).not.toHaveProperty('line');
    await checkpointWriter(file, cp).save();
    await writeFile(file, (await readFile(file, 'utf8')).replace('"line": 7', '"line": 8'));
    const back = await openCheckpoint(file, 's');
    expect(Object.keys(back.files)).toEqual(['__proto__']);
    expect(back.files[name]).toEqual({ line: 8, done: false });
    expect(Object.prototype).not.toHaveProperty('line');
  });

  it('an export checkpoint names only listed files; a scan checkpoint only its segments', async () => {
    const cp = await openCheckpoint(undefined, 's');
    cp.files['data/b.json.gz'] = { line: 1, done: false };
    expect(() => checkExportCheckpoint('cp.json', cp, [{ dataFileS3Key: 'data/a.json.gz' }])).toThrow(
      InvalidCheckpointError,
    );
    expect(() => checkExportCheckpoint('cp.json', cp, [{ dataFileS3Key: 'data/b.json.gz' }])).not.toThrow();
    expect(() => checkScanCheckpoint('cp.json', cp, 4)).toThrow(/a Scan's checkpoint has data files/);
    const scan = await openCheckpoint(undefined, 's');
    scan.segments['4'] = { after: null, items: 0, done: false };
    expect(() => checkScanCheckpoint('cp.json', scan, 4)).toThrow(/names segment "4", but the Scan has 4/);
  });

  it('without a file nothing is written', async () => {
    const cp = await openCheckpoint(undefined, 's');
    await expect(checkpointWriter(undefined, cp).save()).resolves.toBeUndefined();
  });
});
