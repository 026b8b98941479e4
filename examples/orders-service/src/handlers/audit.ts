// The custom-sink function of the CDK app (cdk/app.ts): user deletes, and only those (the mapping
// filters on them), to the audit trail in the archive bucket.
import { createStreamHandler, route } from 'tidewater';
import { auditSink } from '../sinks/audit-sink.js';

const bucket = process.env.ARCHIVE_BUCKET;
if (!bucket) throw new Error('ARCHIVE_BUCKET is not set (cdk/app.ts sets it)');

export const handler = createStreamHandler({
  routes: [
    route({ when: 'user-delete', to: auditSink({ bucket, prefix: process.env.AUDIT_PREFIX ?? 'audit/' }) }),
  ],
});
