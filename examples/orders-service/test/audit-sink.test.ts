// The custom sink proven with tidewater's sink test kit, against a real S3 API server.
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { useLocalAws } from 'tidewater/local/vitest';
import { runSinkTestKit } from 'tidewater/testing';
import { auditSink } from '../src/sinks/audit-sink.js';

const local = useLocalAws();
let buckets = 0;

async function readAudit(bucket: string): Promise<string[]> {
  const s3 = local.current.s3;
  const sequenceNumbers: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: 'audit/', ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) {
      const body = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: object.Key }));
      const entry = JSON.parse(await body.Body!.transformToString()) as { sequenceNumber: string };
      sequenceNumbers.push(entry.sequenceNumber);
    }
    token = page.NextContinuationToken;
  } while (token);
  return sequenceNumbers;
}

const bucketOf = new WeakMap<object, string>();

runSinkTestKit({
  name: 'audit sink',
  create: async () => {
    const bucket = `audit-kit-${++buckets}`;
    await local.current.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const sink = auditSink({ bucket, prefix: 'audit/', client: local.current.s3 });
    bucketOf.set(sink, bucket);
    return sink;
  },
  read: (sink) => readAudit(bucketOf.get(sink)!),
  largeBatch: 300,
});
