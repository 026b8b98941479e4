// What serverless.yml deploys: TTL deletes to the S3 archive, user deletes to the audit trail.
// The handler only composes; the settings come from the function's environment at cold start.
import { createStreamHandler, route } from 'tidewater';
import { S3ArchiveSink } from 'tidewater/s3';
import { auditSink } from '../sinks/audit-sink.js';

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (serverless.yml provider.environment)`);
  return value;
}

const bucket = requiredEnv('ARCHIVE_BUCKET');

export const handler = createStreamHandler({
  routes: [
    route({
      when: 'ttl-delete',
      to: new S3ArchiveSink({
        bucket,
        prefix: 'archive/',
        storageClass: 'GLACIER_IR',
        ttlAttribute: 'expiresAt',
      }),
    }),
    route({ when: 'user-delete', to: auditSink({ bucket, prefix: process.env.AUDIT_PREFIX ?? 'audit/' }) }),
  ],
  // INSERT and MODIFY never reach the function (serverless.yml filters on REMOVE); if a filter
  // change lets them through, they are counted and acknowledged, not failed.
  onUnrouted: 'count',
});
