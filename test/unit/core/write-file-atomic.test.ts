import { chmod, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../../src/core/write-file-atomic.js';

describe('writeFileAtomic', () => {
  it('creates the directories, writes the file and leaves no temporary file beside it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-atomic-'));
    const path = join(dir, 'a', 'b', 'state.json');
    await writeFileAtomic(path, '{"v":1}\n', { flush: true });
    expect(await readFile(path, 'utf8')).toBe('{"v":1}\n');
    await writeFileAtomic(path, new Uint8Array([0x7b, 0x7d]));
    expect(await readFile(path, 'utf8')).toBe('{}');
    expect(await readdir(join(dir, 'a', 'b'))).toEqual(['state.json']);
  });

  it('a failed write leaves the old file as it was and no temporary file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-atomic-'));
    const path = join(dir, 'state.json');
    await writeFile(path, 'old');
    // A directory where the temporary file would go cannot be renamed over a file: rename fails.
    const blocked = join(dir, 'blocked');
    await writeFileAtomic(join(blocked, 'x'), 'inner');
    await expect(writeFileAtomic(blocked, 'new')).rejects.toThrow();
    expect(await readFile(path, 'utf8')).toBe('old');
    expect((await readdir(dir)).sort()).toEqual(['blocked', 'state.json']);
  });

  it('creates the file readable and writable by its owner only, also in place of a 0644 one', async () => {
    // Its callers write item data (file sink, checkpoints) and endpoints (start --write-env).
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-atomic-'));
    const path = join(dir, 'local.env');
    await writeFileAtomic(path, 'A=1\n');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await chmod(path, 0o644);
    await writeFileAtomic(path, 'A=2\n');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });
});
