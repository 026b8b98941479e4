import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { tenantFromPartitionKey } from '../../../src/archive/partition.js';
import { ArchiveRestoreRequiredError } from '../../../src/archive.js';
import { CheckpointMismatchError, InvalidCheckpointError } from '../../../src/backfill.js';
import { replayArchive } from '../../../src/history.js';
import type { PipelineConfig } from '../../../src/pipeline/config.js';
import { parseStreamEvent } from '../../../src/records/index.js';
import type { ClassifiedRecord, LambdaStreamRecord, StreamEventName } from '../../../src/records/types.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { sampleSequenceNumber } from '../../../src/sinks/sample-records.js';
import type { Sink } from '../../../src/sinks/types.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { listKeys } from '../sinks/s3-helpers.js';

const TABLE = 'replay-sample';
const ARN = `arn:aws:dynamodb:us-east-1:123456789012:table/${TABLE}/stream/2026-01-01T00:00:00.000`;
const HOUR_10 = Date.UTC(2026, 0, 15, 10) / 1000;
const RANGE = { table: TABLE, from: '2026-01-15T00:00:00Z', to: '2026-01-16T00:00:00Z' };
const { s3 } = localClients();

interface Change {
  readonly i: number;
  readonly pk: string;
  readonly shard: string;
  readonly eventName: StreamEventName;
}

/**
 * Changes as a stream carries them, 100 s apart from hour 10 (so over two hours): each item's
 * versions `v` in order, a REMOVE of some at the end. Items 0–4 live on shard A until change 40,
 * then (the shard split) on its child B, whose sequence numbers are higher; items 5–7 on C.
 */
function history(count: number, tenants: readonly string[] = ['acme']): Change[] {
  return Array.from({ length: count }, (_, i) => {
    const item = i % 8;
    const tenant = tenants[item % tenants.length] as string;
    const shard = item >= 5 ? 'shardId-C' : i < 40 ? 'shardId-A' : 'shardId-B';
    const last = i >= count - 8;
    const eventName: StreamEventName = i < 8 ? 'INSERT' : last && item % 3 === 0 ? 'REMOVE' : 'MODIFY';
    return { i, pk: `${tenant}#item#${item}`, shard, eventName };
  });
}

function raw(c: Change): LambdaStreamRecord {
  const image = {
    pk: { S: c.pk },
    v: { N: String(c.i) },
    big: { N: `1234567890123456789012345678901234567${c.i % 10}` },
  };
  const previous = { pk: { S: c.pk }, v: { N: String(c.i - 8) } };
  return {
    eventID: `ev-${c.i}`,
    eventName: c.eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: ARN,
    dynamodb: {
      ApproximateCreationDateTime: HOUR_10 + c.i * 100,
      Keys: { pk: { S: c.pk } },
      SequenceNumber: sampleSequenceNumber(c.i),
      StreamViewType: 'NEW_AND_OLD_IMAGES',
      ...(c.eventName === 'REMOVE' ? { OldImage: previous } : { NewImage: image }),
      ...(c.eventName === 'MODIFY' ? { OldImage: previous } : {}),
    },
  } as LambdaStreamRecord;
}

const parsed = (changes: readonly Change[]): ClassifiedRecord[] =>
  changes.flatMap((c) => parseStreamEvent({ Records: [raw(c)] }, { shardId: c.shard }));

/**
 * The changes archived as Lambda's batches write them per shard (batches of 6), then two
 * redeliveries per shard cut at other points: objects overlap, rows are there twice.
 */
async function archive(
  client: S3Client,
  bucket: string,
  changes: readonly Change[],
  options: { prefix?: string; partitionBy?: ReturnType<typeof tenantFromPartitionKey> } = {},
): Promise<{ copies: number }> {
  const sink = new S3ArchiveSink({ client, bucket, ...options });
  let copies = 0;
  for (const shard of ['shardId-A', 'shardId-B', 'shardId-C']) {
    const records = parsed(changes.filter((c) => c.shard === shard));
    for (let i = 0; i < records.length; i += 6)
      expect(await sink.write(records.slice(i, i + 6), {})).toEqual({});
    for (const [a, b] of [
      [2, 9],
      [10, 13],
    ] as const) {
      const again = records.slice(a, b);
      copies += again.length;
      expect(await sink.write(again, {})).toEqual({});
    }
  }
  return { copies };
}

/** A pipeline whose one sink keeps every record it is given, in order. */
function collecting(): { config: PipelineConfig; got: ClassifiedRecord[] } {
  const got: ClassifiedRecord[] = [];
  const sink: Sink = {
    name: 'collect',
    write(records) {
      got.push(...records);
      return {};
    },
  };
  return {
    config: {
      routes: [{ when: ['insert', 'modify', 'user-delete', 'ttl-delete'], to: sink }],
      metrics: false,
    },
    got,
  };
}

const byItem = (records: readonly { raw: LambdaStreamRecord }[]) => {
  const out = new Map<string, string[]>();
  for (const r of records) {
    const pk = r.raw.dynamodb.Keys.pk?.S as string;
    out.set(pk, [...(out.get(pk) ?? []), r.raw.eventID as string]);
  }
  return out;
};

describe('replayArchive on the local S3 server', () => {
  it('delivers each change once, per item in the order it happened, across objects, shards and hours', async () => {
    const bucket = await createTestBucket(s3);
    const changes = history(64);
    const { copies } = await archive(s3, bucket, changes, { prefix: 'changes' });
    const objects = (await listKeys(s3, bucket)).length;
    const { config, got } = collecting();

    const report = await replayArchive(config, {
      client: s3,
      bucket,
      prefix: 'changes',
      ...RANGE,
      batchSize: 5,
    });

    expect(got.map((r) => r.eventID).sort()).toEqual(changes.map((c) => `ev-${c.i}`).sort());
    expect(byItem(got)).toEqual(byItem(changes.map((c) => ({ raw: raw(c) }))));
    // The records are the archived stream records, byte for byte, marked as replayed.
    expect(
      got.map((r) => r.raw).sort((a, b) => (a.eventID as string).localeCompare(b.eventID as string)),
    ).toEqual(changes.map(raw).sort((a, b) => (a.eventID as string).localeCompare(b.eventID as string)));
    const first = got.find((r) => r.eventID === 'ev-0') as ClassifiedRecord;
    expect(first.origin).toEqual({
      source: 'archive',
      objectKey: expect.stringMatching(/^changes\/table=replay-sample\/dt=2026-01-15\/hour=10\/shardId-A\//),
      hour: '2026-01-15T10',
    });
    expect(first.shardId).toBeUndefined();
    expect(report).toMatchObject({
      objects,
      objectsTotal: objects,
      rows: changes.length + copies,
      delivered: changes.length,
      deadLettered: 0,
      failed: 0,
      skippedDuplicates: copies,
      filtered: 0,
      alreadyDone: 0,
      needRestore: [],
      hoursDone: 2,
      hoursTotal: 2,
      complete: true,
      error: undefined,
    });
  });

  it('picks one tenant by its decoded id, and items by key value', async () => {
    const bucket = await createTestBucket(s3);
    const tenants = ['acme corp', 'zürich'];
    const changes = history(48, tenants);
    await archive(s3, bucket, changes, { partitionBy: tenantFromPartitionKey() });

    const zurich = collecting();
    const report = await replayArchive(zurich.config, { client: s3, bucket, ...RANGE, tenant: 'zürich' });
    const expected = changes.filter((c) => c.pk.startsWith('zürich#'));
    expect(zurich.got.map((r) => r.eventID).sort()).toEqual(expected.map((c) => `ev-${c.i}`).sort());
    expect(byItem(zurich.got)).toEqual(byItem(expected.map((c) => ({ raw: raw(c) }))));
    // Other tenants' objects are not fetched at all.
    expect(report.objects).toBe(report.objectsTotal);
    expect(report.filtered).toBe(0);

    const one = collecting();
    const keyed = await replayArchive(one.config, {
      client: s3,
      bucket,
      ...RANGE,
      keys: [{ pk: 'acme corp#item#2' }, { pk: { S: 'zürich#item#5' } }],
    });
    const wanted = changes.filter((c) => c.pk === 'acme corp#item#2' || c.pk === 'zürich#item#5');
    expect(byItem(one.got)).toEqual(byItem(wanted.map((c) => ({ raw: raw(c) }))));
    expect(keyed.delivered).toBe(wanted.length);
    expect(keyed.rows).toBe(keyed.delivered + keyed.skippedDuplicates + keyed.filtered);
  });

  it('matches a number key by value: 1.5 finds the item a record spells 1.50', async () => {
    const bucket = await createTestBucket(s3);
    const records = parseStreamEvent({
      Records: [1, 2, 3].map((n) => {
        const r = raw({ i: n, pk: 'x', shard: 'shardId-A', eventName: 'MODIFY' });
        return { ...r, dynamodb: { ...r.dynamodb, Keys: { id: { N: n === 2 ? '1.50' : `${n}.25` } } } };
      }),
    });
    await new S3ArchiveSink({ client: s3, bucket }).write(records, {});
    const { config, got } = collecting();
    await replayArchive(config, { client: s3, bucket, ...RANGE, keys: [{ id: 1.5 }] });
    expect(got.map((r) => r.eventID)).toEqual(['ev-2']);
  });

  it('resumes after a kill from its checkpoint: each change delivered once over both runs', async () => {
    const bucket = await createTestBucket(s3);
    const changes = history(64);
    await archive(s3, bucket, changes);
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-replay-'));
    const checkpoint = join(dir, 'replay.json');
    const { config, got } = collecting();
    const kill = new Error('killed');
    let batches = 0;
    const killed = replayArchive(config, {
      client: s3,
      bucket,
      ...RANGE,
      batchSize: 4,
      checkpoint,
      // Thrown after a batch's checkpoint is written: the process dies there.
      onProgress: () => {
        if (++batches === 9) throw kill;
      },
    });
    await expect(killed).rejects.toBe(kill);
    const deliveredBefore = got.length;
    expect(deliveredBefore).toBeGreaterThan(0);
    expect(deliveredBefore).toBeLessThan(changes.length);
    expect(JSON.parse(await readFile(checkpoint, 'utf8'))).toMatchObject({ version: 1, complete: false });

    const report = await replayArchive(config, { client: s3, bucket, ...RANGE, batchSize: 4, checkpoint });
    expect(got.map((r) => r.eventID).sort()).toEqual(changes.map((c) => `ev-${c.i}`).sort());
    expect(byItem(got)).toEqual(byItem(changes.map((c) => ({ raw: raw(c) }))));
    expect(report).toMatchObject({
      delivered: changes.length - deliveredBefore,
      alreadyDone: deliveredBefore,
      complete: true,
    });

    // A finished replay run again delivers nothing.
    const again = await replayArchive(config, { client: s3, bucket, ...RANGE, checkpoint });
    expect(again).toMatchObject({ delivered: 0, complete: true });
    expect(got).toHaveLength(changes.length);
  });

  it('a batch that keeps failing stops the replay there; the rerun delivers from the failed record', async () => {
    const bucket = await createTestBucket(s3);
    const changes = history(30);
    await archive(s3, bucket, changes);
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-replay-'));
    const checkpoint = join(dir, 'replay.json');
    const got: string[] = [];
    let broken = true;
    const sink: Sink = {
      name: 'flaky',
      write(records) {
        const failed = records.filter((r) => broken && r.eventID === 'ev-17');
        for (const r of records) if (!failed.includes(r)) got.push(r.eventID);
        return failed.length === 0
          ? {}
          : { failed: failed.map((r) => ({ sequenceNumber: r.sequenceNumber, error: new Error('down') })) };
      },
    };
    const config: PipelineConfig = {
      routes: [{ when: ['insert', 'modify', 'user-delete'], to: sink }],
      metrics: false,
    };
    const stopped = await replayArchive(config, {
      client: s3,
      bucket,
      ...RANGE,
      batchSize: 5,
      attempts: 2,
      checkpoint,
    });
    expect(stopped.complete).toBe(false);
    expect(stopped.error).toMatch(/failed/);
    expect(stopped.failed).toBeGreaterThan(0);
    expect(stopped.rows).toBe(stopped.delivered + stopped.failed + stopped.skippedDuplicates);
    broken = false;
    const rest = await replayArchive(config, { client: s3, bucket, ...RANGE, batchSize: 5, checkpoint });
    expect(rest.complete).toBe(true);
    // Records of the failing batch after ev-17 may be written twice (at least once, as Lambda); none is lost.
    expect(new Set(got)).toEqual(new Set(changes.map((c) => `ev-${c.i}`)));
    expect(stopped.delivered + rest.delivered).toBe(changes.length);
  });

  it('refuses a checkpoint of another replay or not a replay’s, before delivering anything', async () => {
    const bucket = await createTestBucket(s3);
    await archive(s3, bucket, history(16));
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-replay-'));
    const checkpoint = join(dir, 'replay.json');
    const { config, got } = collecting();
    await replayArchive(config, { client: s3, bucket, ...RANGE, keys: [{ pk: 'acme#item#1' }], checkpoint });
    const delivered = got.length;
    await expect(replayArchive(config, { client: s3, bucket, ...RANGE, checkpoint })).rejects.toBeInstanceOf(
      CheckpointMismatchError,
    );
    await writeFile(
      checkpoint,
      JSON.stringify({
        version: 1,
        source: 'x',
        hour: '2026-01-15T10',
        shards: { a: { sequence: '01', eventIDs: [] } },
        complete: false,
      }),
    );
    await expect(replayArchive(config, { client: s3, bucket, ...RANGE, checkpoint })).rejects.toBeInstanceOf(
      InvalidCheckpointError,
    );
    await writeFile(checkpoint, '{');
    await expect(replayArchive(config, { client: s3, bucket, ...RANGE, checkpoint })).rejects.toBeInstanceOf(
      InvalidCheckpointError,
    );
    expect(got).toHaveLength(delivered);
  });

  it('stops before delivering when an object in range is in GLACIER and not restored, naming it', async () => {
    const bucket = await createTestBucket(s3);
    const changes = history(16);
    await new S3ArchiveSink({ client: s3, bucket }).write(
      parsed(changes.filter((c) => c.shard === 'shardId-A')),
      {},
    );
    await new S3ArchiveSink({ client: s3, bucket, storageClass: 'GLACIER' }).write(
      parsed(changes.filter((c) => c.shard === 'shardId-C')),
      {},
    );
    const cold = (await listKeys(s3, bucket)).filter((key) => key.includes('/shardId-C/'));
    expect(cold.length).toBeGreaterThan(0);
    const { config, got } = collecting();
    const error = await replayArchive(config, { client: s3, bucket, ...RANGE }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArchiveRestoreRequiredError);
    expect((error as ArchiveRestoreRequiredError).keys).toEqual(cold);
    expect(got).toHaveLength(0);
    const dry = await replayArchive(config, { client: s3, bucket, ...RANGE, dryRun: true });
    expect(dry).toMatchObject({ needRestore: cold, delivered: 0, complete: false });
    expect(got).toHaveLength(0);
  });

  it('reads an object a compaction or an older writer left without a tenant folder only with partitionBy', async () => {
    const bucket = await createTestBucket(s3);
    const changes = history(16, ['a', 'b']);
    await archive(s3, bucket, changes);
    const { config } = collecting();
    await expect(replayArchive(config, { client: s3, bucket, ...RANGE, tenant: 'a' })).rejects.toMatchObject({
      name: 'UnpartitionedObjectsError',
    });
    const picked = collecting();
    const report = await replayArchive(picked.config, {
      client: s3,
      bucket,
      ...RANGE,
      tenant: 'a',
      partitionBy: tenantFromPartitionKey(),
    });
    expect(picked.got.every((r) => String(r.raw.dynamodb.Keys.pk?.S).startsWith('a#'))).toBe(true);
    expect(report.delivered).toBe(changes.filter((c) => c.pk.startsWith('a#')).length);
    expect(report.filtered).toBe(changes.length - report.delivered);
  });

  it('ignores objects outside the prefix and rows outside the range', async () => {
    const bucket = await createTestBucket(s3);
    const changes = history(40);
    await archive(s3, bucket, changes, { prefix: 'ttl' });
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'other/readme.txt', Body: 'x' }));
    const { config, got } = collecting();
    // 10:00 to 10:30: changes 0–17 (100 s apart).
    const report = await replayArchive(config, {
      client: s3,
      bucket,
      prefix: 'ttl',
      table: TABLE,
      from: '2026-01-15T10:00:00Z',
      to: '2026-01-15T10:30:00Z',
    });
    expect(got.map((r) => r.eventID).sort()).toEqual(
      changes
        .filter((c) => c.i < 18)
        .map((c) => `ev-${c.i}`)
        .sort(),
    );
    expect(report.rows).toBe(report.delivered + report.skippedDuplicates + report.filtered);
  });
});
