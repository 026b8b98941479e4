import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, vi } from 'vitest';
import { parseArchiveKey } from '../../../src/archive/format.js';
import { readArchive } from '../../../src/archive.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { runSinkTestKit } from '../../../src/sinks/testkit.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { s3ClientFor, startRecordingS3 } from './s3-helpers.js';

// The kit's cases are plain it() calls: their timeout is the file's. The large batches put
// hundreds of objects through s3rver (with redeliveries): ~4 s idle, ~17 s with the cores busy.
vi.setConfig({ testTimeout: 180_000 });

const { s3 } = localClients();
const buckets = new WeakMap<S3ArchiveSink, { client: S3Client; bucket: string }>();

async function archived(sink: S3ArchiveSink) {
  const { client, bucket } = buckets.get(sink) as { client: S3Client; bucket: string };
  const out = [];
  for await (const r of readArchive({
    client,
    bucket,
    prefix: 'kit',
    table: 'archive-sample',
    from: 0,
    to: Date.UTC(2100, 0),
  })) {
    out.push(r);
  }
  return out;
}

runSinkTestKit({
  name: 'S3ArchiveSink (s3rver)',
  async create() {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket, prefix: 'kit' });
    buckets.set(sink, { client: s3, bucket });
    return sink;
  },
  read: archived,
});

// Failure injection through the server: a PUT of an object holding an injected record gets one
// 500 (no SDK retry), so the sink must report that object's records failed, and the kit's
// Lambda-style redelivery must still end with every record archived once (as readArchive sees it).
const injected = new Map<string, Set<string>>();
const faulty = await startRecordingS3((req) => {
  if (req.method !== 'PUT') return undefined;
  const [, bucket] = req.path.split('/');
  const pending = injected.get(bucket ?? '');
  const object = parseArchiveKey(req.path);
  if (pending === undefined || object === undefined) return undefined;
  const hit = [...pending].filter(
    (seq) => BigInt(object.first) <= BigInt(seq) && BigInt(seq) <= BigInt(object.last),
  );
  if (hit.length === 0) return undefined;
  for (const seq of hit) pending.delete(seq);
  return { status: 500, code: 'InternalError' };
});
afterAll(() => faulty.server.stop());

runSinkTestKit({
  name: 'S3ArchiveSink with injected 500s (s3rver)',
  largeBatch: 1_000,
  async create() {
    const client = s3ClientFor(faulty.server.endpoint, { maxAttempts: 1 });
    const bucket = await createTestBucket(client);
    // Small objects, so one failing PUT fails only part of a batch.
    const sink = new S3ArchiveSink({ client, bucket, prefix: 'kit', maxObjectBytes: 4_000 });
    buckets.set(sink, { client, bucket });
    return sink;
  },
  read: archived,
  injectFailures(sink, sequenceNumbers) {
    const { bucket } = buckets.get(sink) as { bucket: string };
    injected.set(bucket, new Set(sequenceNumbers));
  },
  dispose(sink) {
    buckets.get(sink)?.client.destroy();
  },
});
