import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3Server } from '../../../src/local/servers/s3-server.js';
import { startS3Server } from '../../../src/local/servers/s3-server.js';
import { processBatch } from '../../../src/pipeline/index.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { sampleTtlDeleteRecords } from '../../../src/sinks/sample-records.js';
import { createTestBucket } from '../../support/aws.js';
import { silentLogger } from '../../unit/pipeline/fixtures.js';
import { s3ClientFor } from '../sinks/s3-helpers.js';

// Per-key lanes run side by side: a lane that throws must not settle the batch while a sibling
// lane's request is still in flight (its failure would surface after the invocation, unhandled).

let server: S3Server;
/** What the server does with the next archive PUTs, in arrival order. */
let plan: ('fail' | 'delay')[] = [];
const finished: string[] = [];

beforeAll(async () => {
  server = await startS3Server({
    middleware: [
      async (ctx, next) => {
        const isArchivePut = ctx.method === 'PUT' && decodeURIComponent(ctx.path).includes('/table=');
        const step = isArchivePut ? plan.shift() : undefined;
        if (step === 'fail') {
          ctx.status = 500;
          ctx.set('Content-Type', 'application/xml');
          ctx.body =
            '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected</Message></Error>';
          return;
        }
        if (step === 'delay') await sleep(400);
        await next();
        if (step === 'delay') finished.push(ctx.path);
      },
    ],
  });
});

afterAll(async () => {
  await server?.stop();
});

describe('per-key delivery', () => {
  it('settles the batch only after every lane settled, when one lane throws while a sibling PUT is in flight', async () => {
    const client = s3ClientFor(server.endpoint, { maxAttempts: 1 });
    const bucket = await createTestBucket(client);
    const sink = new S3ArchiveSink({ client, bucket });
    const records = sampleTtlDeleteRecords(2);
    plan = ['fail', 'delay'];
    const broken = new Error('retryable predicate failed');
    let finishedAtSettle = -1;
    const outcome = await processBatch(
      { Records: records },
      {
        logger: silentLogger(),
        metrics: false,
        ordering: { mode: 'per-key', concurrency: 2 },
        retry: {
          attempts: 2,
          baseDelayMs: 0,
          maxDelayMs: 0,
          // A predicate that throws makes its lane reject.
          retryable: () => {
            throw broken;
          },
        },
        routes: [{ when: ['ttl-delete'], to: sink }],
      },
    ).then(
      (response) => {
        finishedAtSettle = finished.length;
        return response;
      },
      (error: unknown) => {
        finishedAtSettle = finished.length;
        return error;
      },
    );
    // The predicate's error fails the invocation (Lambda retries the batch)...
    expect(outcome).toBe(broken);
    // ...and the delayed lane's PUT had completed when the batch settled.
    expect(finishedAtSettle).toBe(1);
    expect(plan).toEqual([]);
    client.destroy();
  });
});
