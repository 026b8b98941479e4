// What serverless.yml deploys: TTL deletes to the S3 archive, user deletes to the audit trail.
// The handler only composes; the settings come from the function's environment at cold start.
import { S3Client } from '@aws-sdk/client-s3';
import { createStreamHandler, route } from 'tidewater';
import { S3ArchiveSink, SinkRetryStrategy } from 'tidewater/s3';
import { auditSink } from '../sinks/audit-sink.js';

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (serverless.yml provider.environment)`);
  return value;
}

const bucket = requiredEnv('ARCHIVE_BUCKET');
// One client for both sinks (each S3Client costs its own setup on the cold start), with the retry
// strategy S3ArchiveSink would give a client it built itself: no retry quota, 8 attempts.
const s3 = new S3Client({ maxAttempts: 8, retryStrategy: new SinkRetryStrategy(8) });

export const handler = createStreamHandler({
  routes: [
    route({
      when: 'ttl-delete',
      to: new S3ArchiveSink({
        client: s3,
        bucket,
        prefix: 'archive/',
        storageClass: 'GLACIER_IR',
        ttlAttribute: 'expiresAt',
      }),
    }),
    route({
      when: 'user-delete',
      to: auditSink({ client: s3, bucket, prefix: process.env.AUDIT_PREFIX ?? 'audit/' }),
    }),
  ],
  // INSERT and MODIFY never reach the function (serverless.yml filters on REMOVE); if a filter
  // change lets them through, they are counted and acknowledged, not failed.
  onUnrouted: 'count',
});
