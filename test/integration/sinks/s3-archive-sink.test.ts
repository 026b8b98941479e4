import { createHash } from 'node:crypto';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planArchiveObjects } from '../../../src/archive/objects.js';
import { decodeArchiveObject, readArchive } from '../../../src/archive.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import type { S3Server } from '../../../src/local/servers/s3-server.js';
import { NumberValue, parseStreamRecord } from '../../../src/records/index.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { ARCHIVE_STORAGE_CLASSES, S3ArchiveSink, S3DeadLetterSink } from '../../../src/s3.js';
import { ArchiveWriteError } from '../../../src/sinks/errors.js';
import { sampleTtlDeleteRecords, sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { listKeys, type RecordedRequest, s3ClientFor, startRecordingS3 } from './s3-helpers.js';

const FIRST = Date.UTC(2026, 0, 15, 10) / 1000;

/** The key tag of a Lambda batch's object (no shard id): the first record's eventID, hashed. */
const tagOf = (eventID: string | undefined) =>
  createHash('sha256')
    .update(eventID ?? '')
    .digest('hex')
    .slice(0, 12);

/**
 * A Lambda batch of another shard of the same stream: other items and eventIDs, but the same
 * sequence numbers as `like` (AWS documents them unique only within a shard).
 */
function otherShardBatch(like: readonly ClassifiedRecord[]): ClassifiedRecord[] {
  return sampleTtlDeletes(like.length, { start: 500 }).map((r, i) =>
    parseStreamRecord({
      ...r.raw,
      dynamodb: { ...r.raw.dynamodb, SequenceNumber: like[i]?.sequenceNumber as string },
    }),
  );
}
const WIDE = { from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' };

async function readAll(client: S3Client, bucket: string, prefix?: string) {
  const out = [];
  for await (const record of readArchive({
    client,
    bucket,
    table: 'archive-sample',
    ...WIDE,
    ...(prefix ? { prefix } : {}),
  })) {
    out.push(record);
  }
  return out;
}

/** A sink logger that keeps only the warning messages. */
function warningLogger() {
  const warnings: string[] = [];
  const ignore = () => undefined;
  const logger = {
    debug: ignore,
    info: ignore,
    warn: (_obj: object, msg?: string) => void warnings.push(msg ?? ''),
    error: ignore,
  };
  return { logger, warnings };
}

describe('S3ArchiveSink against s3rver', () => {
  const { s3 } = localClients();

  it('writes one gzip NDJSON object per batch and shard under the deterministic key', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket, prefix: 'archive/' });
    const batch = sampleTtlDeletes(20);
    expect(await sink.write(batch, {})).toEqual({});
    const keys = await listKeys(s3, bucket);
    expect(keys).toEqual([
      `archive/table=archive-sample/dt=2026-01-15/hour=10/stream-2026-01-01T00_00_00.000/${batch[0]?.sequenceNumber}-${batch[19]?.sequenceNumber}-${tagOf(batch[0]?.eventID)}.ndjson.gz`,
    ]);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: keys[0] }));
    expect(head.Metadata).toMatchObject({
      format: 'tidewater-ndjson-v1',
      'record-count': '20',
      'first-sequence-number': batch[0]?.sequenceNumber,
      'last-sequence-number': batch[19]?.sequenceNumber,
    });
  });

  it('uses the shard id in the key when the source knows it', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket });
    await sink.write(sampleTtlDeletes(3, { shardId: 'shardId-00000001700000000000-abcdef12' }), {});
    const keys = await listKeys(s3, bucket);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(
      /^table=archive-sample\/dt=2026-01-15\/hour=10\/shardId-00000001700000000000-abcdef12\/\d+-\d+\.ndjson\.gz$/,
    );
  });

  it('reads back exactly the input records: 38-digit numbers, binary, sets, maps', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket });
    const input = sampleTtlDeleteRecords(30);
    const parsed = sampleTtlDeletes(30);
    await sink.write(parsed, {});
    const back = await readAll(s3, bucket);
    expect(back.map((r) => r.raw)).toEqual(input);
    expect(back.map((r) => r.kind)).toEqual(parsed.map((r) => r.kind));
    const amount = back[7]?.oldImage?.amount;
    expect(typeof amount).toBe('bigint');
    expect(String(amount)).toBe(input[7]?.dynamodb.OldImage?.amount?.N);
    const precise = back[7]?.oldImage?.precise;
    expect(precise).toBeInstanceOf(NumberValue);
    expect(String(precise)).toBe(input[7]?.dynamodb.OldImage?.precise?.N);
    expect(Buffer.from(back[7]?.oldImage?.payload as Uint8Array).toString('base64')).toBe(
      input[7]?.dynamodb.OldImage?.payload?.B,
    );
    // The rows are raw DynamoDB JSON with the TTL value alongside.
    const key = (await listKeys(s3, bucket))[0] as string;
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const rows = decodeArchiveObject(
      await (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
      key,
    );
    expect(rows[0]).toMatchObject({
      eventID: input[0]?.eventID,
      kind: 'ttl-delete',
      table: 'archive-sample',
      eventName: 'REMOVE',
      keys: input[0]?.dynamodb.Keys,
      oldImage: input[0]?.dynamodb.OldImage,
      ttlAttribute: 'ttl',
      ttl: input[0]?.dynamodb.OldImage?.ttl?.N,
    });
  });

  it('leaves one object and no duplicate rows when the same batch is redelivered', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket });
    const batch = sampleTtlDeletes(15);
    await sink.write(batch, {});
    await sink.write(batch, {});
    expect(await listKeys(s3, bucket)).toHaveLength(1);
    const back = await readAll(s3, bucket);
    expect(back.map((r) => r.sequenceNumber)).toEqual(batch.map((r) => r.sequenceNumber));
  });

  it('splits a batch spanning hours into one object per hour, and readArchive lists only the hours asked for', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket });
    // 30 records 10 minutes apart: 10:00 .. 14:50, five hour partitions.
    const batch = sampleTtlDeletes(30, { spacingSeconds: 600 });
    await sink.write(batch, {});
    const keys = await listKeys(s3, bucket);
    expect(keys.map((k) => /hour=(\d\d)/.exec(k)?.[1])).toEqual(['10', '11', '12', '13', '14']);
    const some = [];
    for await (const r of readArchive({
      client: s3,
      bucket,
      table: 'archive-sample',
      from: FIRST * 1000 + 3_600_000,
      to: FIRST * 1000 + 3 * 3_600_000,
    })) {
      some.push(r.sequenceNumber);
    }
    expect(some).toEqual(batch.slice(6, 18).map((r) => r.sequenceNumber));
  });

  it('cuts objects at maxObjectBytes and reads them back in order', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket, maxObjectBytes: 8_000 });
    const batch = sampleTtlDeletes(100);
    await sink.write(batch, {});
    const keys = await listKeys(s3, bucket);
    expect(keys.length).toBeGreaterThan(5);
    const back = await readAll(s3, bucket);
    expect(back.map((r) => r.sequenceNumber)).toEqual(batch.map((r) => r.sequenceNumber));
  });

  it('de-duplicates across overlapping objects of a redelivery cut elsewhere', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket });
    const all = sampleTtlDeletes(50);
    await sink.write(all.slice(0, 30), {});
    await sink.write(all.slice(12, 50), {});
    expect(await listKeys(s3, bucket)).toHaveLength(2);
    const back = await readAll(s3, bucket);
    expect(back.map((r) => r.sequenceNumber)).toEqual(all.map((r) => r.sequenceNumber));
  });

  it('keeps both batches of two shards with the same first and last sequence numbers (Lambda: one stream-label segment)', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket });
    // Lambda batches carry no shard id, so both shards' objects sit under `stream-<label>`, and
    // sequence numbers are documented unique only within a shard: the two batches below have
    // equal sequence ranges, so only the tag of their first eventID keeps their keys apart.
    const shardA = sampleTtlDeletes(3);
    const shardB = otherShardBatch(shardA);
    expect(shardB.map((r) => r.sequenceNumber)).toEqual(shardA.map((r) => r.sequenceNumber));
    expect(await sink.write(shardA, {})).toEqual({});
    expect(await sink.write(shardB, {})).toEqual({});
    const keys = await listKeys(s3, bucket);
    const range = `${shardA[0]?.sequenceNumber}-${shardA[2]?.sequenceNumber}`;
    expect(keys).toEqual(
      [
        `table=archive-sample/dt=2026-01-15/hour=10/stream-2026-01-01T00_00_00.000/${range}-${tagOf(shardA[0]?.eventID)}.ndjson.gz`,
        `table=archive-sample/dt=2026-01-15/hour=10/stream-2026-01-01T00_00_00.000/${range}-${tagOf(shardB[0]?.eventID)}.ndjson.gz`,
      ].sort(),
    );
    const back = await readAll(s3, bucket);
    const byEventID = (a: { eventID: string }, b: { eventID: string }) => (a.eventID < b.eventID ? -1 : 1);
    expect(back.map((r) => r.raw).sort(byEventID)).toEqual(
      [...shardA, ...shardB].map((r) => r.raw).sort(byEventID),
    );
    // A redelivery of either batch lands on its own key, and a true copy is still read once.
    expect(await sink.write(shardB, {})).toEqual({});
    expect(await sink.write(shardA.slice(1), {})).toEqual({});
    expect(await listKeys(s3, bucket)).toHaveLength(3);
    expect(await readAll(s3, bucket)).toHaveLength(6);
  });

  it('reads objects written before keys carried a tag alongside tagged ones', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket });
    const all = sampleTtlDeletes(10);
    expect(await sink.write(all.slice(4), {})).toEqual({});
    // An object of the first four records under the old key form: same bytes, no tag.
    const { objects } = planArchiveObjects(all.slice(0, 4), {
      prefix: '',
      ttlAttribute: 'ttl',
      maxObjectBytes: 1 << 24,
      table: undefined,
    });
    const old = objects[0] as (typeof objects)[number];
    const untagged = old.key.replace(/-[0-9a-f]{12}\.ndjson\.gz$/, '.ndjson.gz');
    expect(untagged).not.toBe(old.key);
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: untagged,
        Body: old.body,
        Metadata: { sha256: old.sha256 },
      }),
    );
    const back = await readAll(s3, bucket);
    expect(back.map((r) => r.sequenceNumber)).toEqual(all.map((r) => r.sequenceNumber));
  });

  it('removes overlapping copies within each hour partition of a range spanning hours', async () => {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket });
    // 20-minute spacing: records 0-2 fall in hour 10, 3-5 in hour 11.
    const all = sampleTtlDeletes(6, { spacingSeconds: 1200 });
    expect(await sink.write(all.slice(0, 5), {})).toEqual({});
    expect(await sink.write(all.slice(1, 6), {})).toEqual({});
    // Two overlapping objects in each hour.
    expect(await listKeys(s3, bucket)).toHaveLength(4);
    const back = await readAll(s3, bucket);
    expect(back.map((r) => r.sequenceNumber)).toEqual(all.map((r) => r.sequenceNumber));
  });

  describe('on a private s3rver that records requests', () => {
    let server: S3Server;
    let requests: RecordedRequest[];
    let faultPlan: ((req: RecordedRequest) => { status: number; code: string } | undefined) | undefined;

    beforeAll(async () => {
      ({ server, requests } = await startRecordingS3((req) => faultPlan?.(req)));
    });
    afterAll(async () => {
      await server.stop();
    });

    const puts = (bucket: string) =>
      requests.filter(
        (r) => r.method === 'PUT' && r.path.startsWith(`/${bucket}/`) && r.path.length > bucket.length + 2,
      );

    it('sends the storage class, SSE, checksum and If-None-Match headers', async () => {
      const client = s3ClientFor(server.endpoint);
      const bucket = await createTestBucket(client);
      const kms = new S3ArchiveSink({
        client,
        bucket,
        storageClass: 'DEEP_ARCHIVE',
        sse: { kmsKeyId: 'alias/archive', bucketKeyEnabled: true },
      });
      await kms.write(sampleTtlDeletes(5), {});
      const aes = new S3ArchiveSink({
        client,
        bucket,
        prefix: 'aes',
        storageClass: 'GLACIER_IR',
        sse: 'AES256',
      });
      await aes.write(sampleTtlDeletes(5), {});
      const [first, second] = puts(bucket);
      expect(first?.headers).toMatchObject({
        'x-amz-storage-class': 'DEEP_ARCHIVE',
        'x-amz-server-side-encryption': 'aws:kms',
        'x-amz-server-side-encryption-aws-kms-key-id': 'alias/archive',
        'x-amz-server-side-encryption-bucket-key-enabled': 'true',
        'if-none-match': '*',
        'x-amz-meta-record-count': '5',
      });
      expect(second?.headers).toMatchObject({
        'x-amz-storage-class': 'GLACIER_IR',
        'x-amz-server-side-encryption': 'AES256',
      });
      // A plain header S3 verifies, not an aws-chunked trailer: the body s3rver stored is intact.
      expect(first?.headers['x-amz-checksum-sha256']).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(first?.headers['content-encoding']).toBe('gzip');
      const keys = await listKeys(client, bucket);
      const head = await client.send(
        new HeadObjectCommand({ Bucket: bucket, Key: keys.find((k) => !k.startsWith('aes')) }),
      );
      expect(head.StorageClass).toBe('DEEP_ARCHIVE');
      expect(head.Metadata?.sha256).toBe(first?.headers['x-amz-checksum-sha256']);
    });

    it('treats 412 PreconditionFailed (the object already exists) as written', async () => {
      const client = s3ClientFor(server.endpoint);
      const bucket = await createTestBucket(client);
      const sink = new S3ArchiveSink({ client, bucket });
      const batch = sampleTtlDeletes(8);
      await sink.write(batch, {});
      // s3rver ignores If-None-Match; answer the redelivery the way S3 does.
      faultPlan = (req) =>
        req.method === 'PUT' && req.headers['if-none-match'] === '*'
          ? { status: 412, code: 'PreconditionFailed' }
          : undefined;
      try {
        expect(await sink.write(batch, {})).toEqual({});
      } finally {
        faultPlan = undefined;
      }
      expect(puts(bucket)).toHaveLength(2);
      expect((await readAll(client, bucket)).map((r) => r.sequenceNumber)).toEqual(
        batch.map((r) => r.sequenceNumber),
      );
    });

    it("does not take 412 for another shard's object with the same sequence range as written", async () => {
      const client = s3ClientFor(server.endpoint, { maxAttempts: 1 });
      const bucket = await createTestBucket(client);
      const sink = new S3ArchiveSink({ client, bucket });
      // s3rver ignores If-None-Match; answer it the way S3 does: 412 once the key exists.
      const stored = new Set<string>();
      faultPlan = (req) => {
        if (req.method !== 'PUT' || !req.path.startsWith(`/${bucket}/`)) return undefined;
        if (req.headers['if-none-match'] === '*' && stored.has(req.path))
          return { status: 412, code: 'PreconditionFailed' };
        stored.add(req.path);
        return undefined;
      };
      const shardA = sampleTtlDeletes(4);
      const shardB = otherShardBatch(shardA);
      try {
        expect(await sink.write(shardA, {})).toEqual({});
        expect(await sink.write(shardB, {})).toEqual({});
        // The same batch again: its key exists, 412, counted as written.
        expect(await sink.write(shardB, {})).toEqual({});
      } finally {
        faultPlan = undefined;
      }
      expect(puts(bucket)).toHaveLength(3);
      expect(await listKeys(client, bucket)).toHaveLength(2);
      expect((await readAll(client, bucket)).map((r) => r.eventID).sort()).toEqual(
        [...shardA, ...shardB].map((r) => r.eventID).sort(),
      );
    });

    it('falls back to plain PUTs when the server answers If-None-Match with 501 NotImplemented', async () => {
      const client = s3ClientFor(server.endpoint, { maxAttempts: 1 });
      const bucket = await createTestBucket(client);
      // One PUT at a time, so the order of conditional and plain PUTs is fixed.
      const sink = new S3ArchiveSink({ client, bucket, concurrency: 1 });
      // S3 before conditional writes (and some S3-compatible stores) refuse the header this way.
      faultPlan = (req) =>
        req.method === 'PUT' && req.headers['if-none-match'] !== undefined
          ? { status: 501, code: 'NotImplemented' }
          : undefined;
      const { logger, warnings } = warningLogger();
      // Two hours: two objects, so the second PUT shows the fallback is remembered.
      const batch = sampleTtlDeletes(6, { spacingSeconds: 1200 });
      try {
        expect(await sink.write(batch, { logger })).toEqual({});
        expect(await sink.write(batch, { logger })).toEqual({});
      } finally {
        faultPlan = undefined;
      }
      const sent = puts(bucket);
      expect(sent.map((r) => r.headers['if-none-match'] !== undefined)).toEqual([
        true,
        false,
        false,
        false,
        false,
      ]);
      expect(warnings).toHaveLength(1);
      expect(await listKeys(client, bucket)).toHaveLength(2);
      expect((await readAll(client, bucket)).map((r) => r.sequenceNumber)).toEqual(
        batch.map((r) => r.sequenceNumber),
      );
    });

    it.each([
      { status: 501, code: 'NotImplemented' },
      { status: 500, code: 'InternalError' },
    ])(
      'keeps conditional creates on when the PUT without If-None-Match after a 501 fails too ($code)',
      async (retryAnswer) => {
        const client = s3ClientFor(server.endpoint, { maxAttempts: 1 });
        const bucket = await createTestBucket(client);
        const sink = new S3ArchiveSink({ client, bucket, concurrency: 1 });
        // A 501 the conditional header did not cause (S3-compatible stores answer other headers they
        // lack the same way): the retry without the header fails as well.
        const answers = [{ status: 501, code: 'NotImplemented' }, retryAnswer];
        faultPlan = (req) =>
          req.method === 'PUT' && req.path.startsWith(`/${bucket}/`) ? answers.shift() : undefined;
        const { logger, warnings } = warningLogger();
        const batch = sampleTtlDeletes(5);
        let first: Awaited<ReturnType<typeof sink.write>>;
        try {
          first = await sink.write(batch, { logger });
          // Lambda's retry of the batch, on the same sink (one per container).
          expect(await sink.write(batch, { logger })).toEqual({});
        } finally {
          faultPlan = undefined;
        }
        expect(first.failed?.map((f) => f.sequenceNumber)).toEqual(batch.map((r) => r.sequenceNumber));
        const error = first.failed?.[0]?.error as ArchiveWriteError;
        expect(error).toBeInstanceOf(ArchiveWriteError);
        expect((error.cause as Error).name).toBe(retryAnswer.code);
        expect(puts(bucket).map((r) => r.headers['if-none-match'] ?? null)).toEqual(['*', null, '*']);
        // Only the failed object is reported: nothing about writing unconditionally.
        expect(warnings).toEqual(['archive objects not written']);
        // Still conditional: a later redelivery is answered 412 and counted as written.
        faultPlan = (req) =>
          req.method === 'PUT' && req.headers['if-none-match'] === '*'
            ? { status: 412, code: 'PreconditionFailed' }
            : undefined;
        try {
          expect(await sink.write(batch, { logger })).toEqual({});
        } finally {
          faultPlan = undefined;
        }
        expect(puts(bucket).map((r) => r.headers['if-none-match'] ?? null)).toEqual(['*', null, '*', '*']);
        expect((await readAll(client, bucket)).map((r) => r.sequenceNumber)).toEqual(
          batch.map((r) => r.sequenceNumber),
        );
      },
    );

    it('retries 409 ConditionalRequestConflict itself, after a pause, and writes the object', async () => {
      // maxAttempts 1: no SDK retry, so every PUT after the first is the sink's own.
      const client = s3ClientFor(server.endpoint, { maxAttempts: 1 });
      const bucket = await createTestBucket(client);
      const sink = new S3ArchiveSink({ client, bucket });
      let conflicts = 2;
      faultPlan = (req) =>
        req.method === 'PUT' && req.path.startsWith(`/${bucket}/`) && conflicts-- > 0
          ? { status: 409, code: 'ConditionalRequestConflict' }
          : undefined;
      const batch = sampleTtlDeletes(7);
      try {
        expect(await sink.write(batch, {})).toEqual({});
      } finally {
        faultPlan = undefined;
      }
      expect(puts(bucket)).toHaveLength(3);
      expect((await readAll(client, bucket)).map((r) => r.sequenceNumber)).toEqual(
        batch.map((r) => r.sequenceNumber),
      );
    });

    it('reports the records failed when 409 ConditionalRequestConflict persists past 3 attempts', async () => {
      const client = s3ClientFor(server.endpoint, { maxAttempts: 1 });
      const bucket = await createTestBucket(client);
      const sink = new S3ArchiveSink({ client, bucket });
      faultPlan = (req) =>
        req.method === 'PUT' && req.path.startsWith(`/${bucket}/`)
          ? { status: 409, code: 'ConditionalRequestConflict' }
          : undefined;
      const batch = sampleTtlDeletes(4);
      let result: Awaited<ReturnType<typeof sink.write>>;
      try {
        result = await sink.write(batch, {});
      } finally {
        faultPlan = undefined;
      }
      expect(puts(bucket)).toHaveLength(3);
      expect(result.failed?.map((f) => f.sequenceNumber)).toEqual(batch.map((r) => r.sequenceNumber));
      expect(result.failed?.[0]?.error).toBeInstanceOf(ArchiveWriteError);
      const error = result.failed?.[0]?.error as ArchiveWriteError;
      expect((error.cause as Error).name).toBe('ConditionalRequestConflict');
    });

    it('retries a run of 5xx and SlowDown responses through the SDK retry strategy and loses nothing', async () => {
      const client = s3ClientFor(server.endpoint, { maxAttempts: 6 });
      const bucket = await createTestBucket(client);
      const sink = new S3ArchiveSink({ client, bucket });
      const answers = [
        { status: 500, code: 'InternalError' },
        { status: 503, code: 'SlowDown' },
        { status: 503, code: 'ServiceUnavailable' },
        { status: 500, code: 'InternalError' },
      ];
      faultPlan = (req) =>
        req.method === 'PUT' && req.path.startsWith(`/${bucket}/`) ? answers.shift() : undefined;
      const batch = sampleTtlDeletes(40);
      try {
        expect(await sink.write(batch, {})).toEqual({});
      } finally {
        faultPlan = undefined;
      }
      expect(answers).toHaveLength(0);
      expect(puts(bucket)).toHaveLength(5);
      expect((await readAll(client, bucket)).map((r) => r.sequenceNumber)).toEqual(
        batch.map((r) => r.sequenceNumber),
      );
    });

    it('reports every record of an object as failed once the retries are exhausted', async () => {
      const client = s3ClientFor(server.endpoint, { maxAttempts: 2 });
      const bucket = await createTestBucket(client);
      const sink = new S3ArchiveSink({ client, bucket });
      // Two hours: the 10:00 object fails, the 11:00 object is written.
      const batch = sampleTtlDeletes(6, { spacingSeconds: 1200 });
      faultPlan = (req) =>
        req.method === 'PUT' && req.path.includes('/hour=10/')
          ? { status: 500, code: 'InternalError' }
          : undefined;
      let result: Awaited<ReturnType<typeof sink.write>>;
      try {
        result = await sink.write(batch, {});
      } finally {
        faultPlan = undefined;
      }
      expect(result.failed?.map((f) => f.sequenceNumber)).toEqual(
        batch.slice(0, 3).map((r) => r.sequenceNumber),
      );
      const error = result.failed?.[0]?.error as ArchiveWriteError;
      expect(error).toBeInstanceOf(ArchiveWriteError);
      expect(error.name).toBe('ArchiveWriteError');
      expect(error.firstSequenceNumber).toBe(batch[0]?.sequenceNumber);
      expect(puts(bucket).filter((r) => r.path.includes('/hour=10/'))).toHaveLength(2);
      expect((await readAll(client, bucket)).map((r) => r.sequenceNumber)).toEqual(
        batch.slice(3).map((r) => r.sequenceNumber),
      );
    });
  });
});

describe('S3 sink options', () => {
  const { s3 } = localClients();

  it('exports the storage classes the archive sink accepts, and rejects any other', () => {
    expect(ARCHIVE_STORAGE_CLASSES).toEqual([
      'STANDARD',
      'STANDARD_IA',
      'GLACIER_IR',
      'GLACIER',
      'DEEP_ARCHIVE',
    ]);
    for (const storageClass of ARCHIVE_STORAGE_CLASSES)
      expect(() => new S3ArchiveSink({ client: s3, bucket: 'b', storageClass })).not.toThrow();
    expect(() => new S3ArchiveSink({ client: s3, bucket: 'b', storageClass: 'ONEZONE_IA' as never })).toThrow(
      InvalidOptionsError,
    );
  });

  it.each([
    ['S3ArchiveSink', (sse: unknown) => new S3ArchiveSink({ client: s3, bucket: 'b', sse: sse as never })],
    [
      'S3DeadLetterSink',
      (sse: unknown) => new S3DeadLetterSink({ client: s3, bucket: 'b', sse: sse as never }),
    ],
  ])('%s validates sse the same way', (_name, create) => {
    expect(() => create('AES256')).not.toThrow();
    expect(() => create({ kmsKeyId: 'alias/archive', bucketKeyEnabled: true })).not.toThrow();
    expect(() => create({ kmsKeyId: '' })).toThrow(/kmsKeyId/);
    expect(() => create({ kmsKeyId: 'alias/archive', bucketKeyEnabled: 'yes' })).toThrow(/bucketKeyEnabled/);
    expect(() => create({ kmsKeyId: 'alias/archive', bucketKey: true })).toThrow(InvalidOptionsError);
    expect(() => create({})).toThrow(/kmsKeyId/);
    expect(() => create('aws:kms')).toThrow(InvalidOptionsError);
  });
});
