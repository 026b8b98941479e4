import type { S3Client } from '@aws-sdk/client-s3';
import { type S3Server, startS3Server } from '../../src/local/servers/s3-server.js';
import { s3ClientFor } from '../integration/sinks/s3-helpers.js';

/**
 * A test's own local S3 server whose restores are timed by `clock.now`, which the test moves: a
 * RestoreObject is in progress until the clock passes `restoreDelayMs`, then done, without waiting.
 */
export async function startClockedS3(restoreDelayMs: number, now: number) {
  const clock = { now };
  const server: S3Server = await startS3Server({ restoreDelayMs, clock: () => clock.now });
  const s3: S3Client = s3ClientFor(server.endpoint, { maxAttempts: 1 });
  return {
    server,
    s3,
    clock,
    async stop() {
      s3.destroy();
      await server.stop();
    },
  };
}
