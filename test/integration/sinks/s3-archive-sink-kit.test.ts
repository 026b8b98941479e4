import { readArchive, S3ArchiveSink } from '../../../src/sinks/index.js';
import { runSinkTestKit } from '../../../src/sinks/testkit.js';
import { createTestBucket, localClients } from '../../support/aws.js';

const { s3 } = localClients();
const buckets = new WeakMap<S3ArchiveSink, string>();

runSinkTestKit({
  name: 'S3ArchiveSink (s3rver)',
  async create() {
    const bucket = await createTestBucket(s3);
    const sink = new S3ArchiveSink({ client: s3, bucket, prefix: 'kit' });
    buckets.set(sink, bucket);
    return sink;
  },
  async read(sink) {
    const out = [];
    const bucket = buckets.get(sink) as string;
    for await (const r of readArchive({
      client: s3,
      bucket,
      prefix: 'kit',
      table: 'archive-sample',
      from: 0,
      to: Date.UTC(2100, 0),
    })) {
      out.push(r);
    }
    return out;
  },
});
