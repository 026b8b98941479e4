/**
 * The archive-replay suite's workload, replay only, for a CPU profile (bench/why/archive-replay.md):
 * `node --cpu-prof --cpu-prof-dir bench/.out/prof --import tsx bench/lib/archive-replay-profile.ts`
 * then `npx tsx bench/lib/cpuprofile-top.ts bench/.out/prof/<file>.cpuprofile`.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { replayArchive } from '../../src/history/replay-archive.js';
import { startLocalAws } from '../../src/local/servers/local-aws.js';
import { S3ArchiveSink } from '../../src/sinks/s3-archive-sink.js';
import { sampleTtlDeletes } from '../../src/sinks/sample-records.js';
import { readingPipeline } from './reading-pipeline.js';

const BUCKET = 'archive-replay-profile';
const FROM = Date.UTC(2026, 0, 15, 10);
const count = 24_000;
const aws = await startLocalAws();
try {
  await aws.s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  const records = sampleTtlDeletes(count, { firstTime: FROM / 1000, spacingSeconds: 3 });
  const sink = new S3ArchiveSink({ client: aws.s3, bucket: BUCKET });
  for (let i = 0; i < count; i += 500) await sink.write(records.slice(i, i + 500), {});
  await sink.write(records.slice(250, 250 + count / 10), {});
  const { pipeline, touched } = readingPipeline('ttl-delete');
  for (let round = 0; round < 6; round++)
    await replayArchive(pipeline, {
      client: aws.s3,
      bucket: BUCKET,
      table: 'archive-sample',
      from: FROM,
      to: FROM + 86_400_000,
    });
  console.log(`touched ${touched()}`);
} finally {
  await aws.stop();
}
