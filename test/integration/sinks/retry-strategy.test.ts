import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { S3Server } from '../../../src/local/servers/s3-server.js';
import { S3ArchiveSink, SinkRetryStrategy } from '../../../src/s3.js';
import { sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { createTestBucket } from '../../support/aws.js';
import { listKeys, type RecordedRequest, s3ClientFor, startRecordingS3 } from './s3-helpers.js';

// Sustained 5xx: the SDK's standard strategy drains its per-client retry quota (500 tokens, 5 a
// retry) and then fails requests long before maxAttempts. The sinks' own clients keep none.

let server: S3Server;
let failUntilAttempt = 0;
const putsByKey = new Map<string, number>();

beforeAll(async () => {
  ({ server } = await startRecordingS3((req: RecordedRequest) => {
    if (req.method !== 'PUT' || failUntilAttempt === 0 || req.path.split('/').length < 3) return undefined;
    const n = (putsByKey.get(req.path) ?? 0) + 1;
    putsByKey.set(req.path, n);
    return n < failUntilAttempt ? { status: 500, code: 'InternalError' } : undefined;
  }));
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await server?.stop();
});

describe('the client an S3 sink builds', () => {
  it('makes every one of maxAttempts attempts of each PUT under sustained 500s, over the standard quota', async () => {
    const admin = s3ClientFor(server.endpoint);
    const bucket = await createTestBucket(admin);
    // The sink builds its client from the environment, as in Lambda.
    vi.stubEnv('AWS_ENDPOINT_URL_S3', server.endpoint);
    const sink = new S3ArchiveSink({ bucket, maxAttempts: 8, maxObjectBytes: 1, concurrency: 32 });
    const batch = sampleTtlDeletes(24);
    failUntilAttempt = 8;
    try {
      // 24 objects × 7 failed attempts: 168 retries, 840 quota tokens where the SDK's standard
      // strategy has 500.
      expect(await sink.write(batch, {})).toEqual({});
    } finally {
      failUntilAttempt = 0;
    }
    expect(putsByKey.size).toBe(24);
    expect([...putsByKey.values()].every((n) => n === 8)).toBe(true);
    expect(await listKeys(admin, bucket)).toHaveLength(24);
    admin.destroy();
  });

  it('stops at maxAttempts and retries no error that is not throttling or transient', async () => {
    const strategy = new SinkRetryStrategy(3);
    let token = await strategy.acquireInitialRetryToken();
    token = await strategy.refreshRetryTokenForRetry(token, { errorType: 'TRANSIENT' });
    token = await strategy.refreshRetryTokenForRetry(token, { errorType: 'THROTTLING' });
    expect(token.getRetryCount()).toBe(2);
    await expect(strategy.refreshRetryTokenForRetry(token, { errorType: 'TRANSIENT' })).rejects.toThrow(
      'No retry token available',
    );
    const fresh = await strategy.acquireInitialRetryToken();
    await expect(strategy.refreshRetryTokenForRetry(fresh, { errorType: 'CLIENT_ERROR' })).rejects.toThrow(
      'No retry token available',
    );
  });
});
