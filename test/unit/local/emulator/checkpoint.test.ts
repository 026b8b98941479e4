import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointStore } from '../../../../src/local/emulator/checkpoint.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidewater-checkpoint-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ARN = 'arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/2026-01-01T00:00:00.000';

describe('CheckpointStore', () => {
  it('persists per-shard positions atomically and reopens them', async () => {
    const file = join(dir, 'nested', 'cp.json');
    const store = await CheckpointStore.open(ARN, file);
    await store.commit('shard-1', '000000000000000000005');
    await store.commit('shard-2', '000000000000000000009');
    await store.finish('shard-1');
    const reopened = await CheckpointStore.open(ARN, file);
    expect(reopened.get('shard-1')).toEqual({ sequenceNumber: '000000000000000000005', finished: true });
    expect(reopened.get('shard-2')).toEqual({ sequenceNumber: '000000000000000000009' });
    expect((await readdir(join(dir, 'nested'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('never moves a shard backwards, comparing sequence numbers as integers', async () => {
    const file = join(dir, 'monotonic.json');
    const store = await CheckpointStore.open(ARN, file);
    await store.commit('s', '100');
    await store.commit('s', '99');
    await store.commit('s', '0000000000000000000098');
    expect(store.get('s')?.sequenceNumber).toBe('100');
    await store.commit('s', '1000');
    expect(JSON.parse(await readFile(file, 'utf8')).shards.s.sequenceNumber).toBe('1000');
  });

  it('refuses a checkpoint of another stream or a damaged file', async () => {
    const file = join(dir, 'other.json');
    const store = await CheckpointStore.open(ARN, file);
    await store.commit('s', '1');
    await expect(CheckpointStore.open(`${ARN}-other`, file)).rejects.toMatchObject({
      name: 'CheckpointError',
    });
    const damaged = join(dir, 'damaged.json');
    await writeFile(damaged, '{"version": 1, "streamArn"');
    await expect(CheckpointStore.open(ARN, damaged)).rejects.toThrow(/not JSON/);
  });
});
