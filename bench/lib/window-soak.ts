/**
 * The windows soak: order totals through createWindowHandler in the event source mapping
 * emulator's tumbling windows (60 s), the function throwing and hanging before and after its
 * work, each window segment's total written by `onWindowEnd` to a local S3 server that fails a
 * share of PUTs (some after applying them). Then the stored totals are read back: every record
 * counted exactly once over all segments, whatever was retried. Used by bench/soak.ts and
 * test/integration/soak.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { EventSourceMappingEmulator } from '../../src/local/emulator/emulator.js';
import { type S3ServerMiddleware, startS3Server } from '../../src/local/servers/s3-server.js';
import { createWindowHandler } from '../../src/pipeline/index.js';
import type { LambdaStreamRecord } from '../../src/records/types.js';
import { watchEscapes } from './escapes.js';
import { createRandom } from './random.js';
import { passOnCountingErrors, soakS3Client } from './soak-s3.js';

export interface WindowSoakOptions {
  seed: number;
  /** Order inserts per shard. */
  records: number;
  shards: number;
  /** Shares: PUTs answered 500/503 unapplied, PUTs applied then answered 500, invocations that fail. */
  faults: { s3Errors: number; latePuts: number; throwBefore: number; throwAfter: number; hang: number };
  timeoutSeconds: number;
}

export interface WindowSoakResult {
  seed: number;
  records: number;
  invocations: number;
  /** Window segments stored (a window Lambda ended early is two). */
  segments: number;
  injected: { s3Errors: number; latePuts: number; throwBefore: number; throwAfter: number; hang: number };
  /** Records the stored totals count beyond or short of those sent (0 when exact). */
  countOff: number;
  /** The stored sums' difference from the sum sent (0 when exact). */
  sumOff: number;
  processErrors: string[];
  stalls: string[];
  serverErrors: string[];
}

const BUCKET = 'soak-windows';
const START = 1_768_471_200;
const STREAM_ARN =
  'arn:aws:dynamodb:us-east-1:123456789012:table/soak-window-orders/stream/2026-01-01T00:00:00.000';

interface Total {
  count: number;
  sum: number;
}

function orderInsert(shard: number, i: number, amount: number): LambdaStreamRecord {
  const keys = { pk: { S: `order#${shard}-${i}` } };
  return {
    eventID: `w${shard}-${i}`,
    eventName: 'INSERT',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: STREAM_ARN,
    dynamodb: {
      // Two seconds apart: about 30 records per 60-second window.
      ApproximateCreationDateTime: START + i * 2,
      Keys: keys,
      NewImage: { ...keys, amount: { N: String(amount) } },
      SequenceNumber: String(100_000_000_000_000_000_000n + BigInt(i) * 7n),
      SizeBytes: 60,
      StreamViewType: 'NEW_IMAGE',
    },
  };
}

export async function runWindowSoak(options: WindowSoakOptions): Promise<WindowSoakResult> {
  const { faults } = options;
  const random = createRandom(options.seed ^ 0x3d0f);
  const injected = { s3Errors: 0, latePuts: 0, throwBefore: 0, throwAfter: 0, hang: 0 };
  const serverErrors: string[] = [];
  // Anything that escapes the code under test while the soak runs: counted, reported, never ignored.
  const escapes = watchEscapes();
  const processErrors = escapes.errors;
  let faulting = true;
  const fail = (ctx: Parameters<S3ServerMiddleware>[0], status: number) => {
    ctx.status = status;
    ctx.set('Content-Type', 'application/xml');
    ctx.body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${status === 500 ? 'InternalError' : 'ServiceUnavailable'}</Code><Message>injected by the soak</Message></Error>`;
  };
  const middleware: S3ServerMiddleware = async (ctx, next) => {
    if (faulting && ctx.method === 'PUT') {
      if (random.next() < faults.s3Errors) {
        injected.s3Errors++;
        return fail(ctx, random.next() < 0.5 ? 500 : 503);
      }
      if (random.next() < faults.latePuts) {
        await next();
        if (ctx.status !== 200) return;
        injected.latePuts++;
        return fail(ctx, 500);
      }
    }
    return passOnCountingErrors(ctx, next, serverErrors);
  };
  const server = await startS3Server({ buckets: [BUCKET], middleware: [middleware] });
  const client = soakS3Client(server.endpoint, 8);
  try {
    let expectedSum = 0;
    const shards = Array.from({ length: options.shards }, (_, s) => {
      const records = Array.from({ length: options.records }, (_, i) => {
        const amount = random.int(1, 10_000);
        expectedSum += amount;
        return orderInsert(s, i, amount);
      });
      return { shardId: `shardId-window-${s}`, records };
    });
    const handler = createWindowHandler<Total>({
      initial: () => ({ count: 0, sum: 0 }),
      reduce: (state, records) => ({
        count: state.count + records.length,
        sum: state.sum + records.reduce((n, r) => n + Number(r.newImage?.amount), 0),
      }),
      // Keyed by the segment: a retried final invocation writes the same object again.
      onWindowEnd: async (state, window) => {
        await client.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: `windows/${window.shardId}/${window.start}/${window.firstSequenceNumber}-${window.lastSequenceNumber}.json`,
            Body: JSON.stringify(state),
          }),
        );
      },
    });
    const timeoutMs = options.timeoutSeconds * 1000;
    let invocations = 0;
    const emulator = new EventSourceMappingEmulator({
      functionName: 'soak-windows',
      batchSize: 25,
      tumblingWindowInSeconds: 60,
      timeoutSeconds: options.timeoutSeconds,
      timedOutSettleMs: timeoutMs,
      stallAfterAttempts: 100,
      keepLog: false,
      handler: async (event, context) => {
        invocations++;
        let roll = random.next();
        const fault = (['throwBefore', 'throwAfter', 'hang'] as const).find((f) => {
          if (roll < faults[f]) return true;
          roll -= faults[f];
          return false;
        });
        if (fault !== undefined) injected[fault]++;
        if (fault === 'throwBefore') throw new Error('injected: the function failed before its work');
        if (fault === 'hang') {
          await sleep(timeoutMs + 200);
          return undefined;
        }
        const response = await handler(event as never, context);
        if (fault === 'throwAfter') throw new Error('injected: the function failed after its work');
        return response;
      },
    });
    const stalls: string[] = [];
    await Promise.all(
      shards.map((shard) =>
        emulator
          .runShard({
            shardId: shard.shardId,
            streamArn: STREAM_ARN,
            pages: Array.from({ length: Math.ceil(shard.records.length / 100) }, (_, p) =>
              shard.records.slice(p * 100, p * 100 + 100),
            ),
          })
          .catch((error: unknown) => {
            stalls.push(`${shard.shardId}: ${(error as Error).name}: ${(error as Error).message}`);
          }),
      ),
    );
    faulting = false;
    let count = 0;
    let sum = 0;
    let segments = 0;
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'windows/', ContinuationToken: token }),
      );
      for (const item of page.Contents ?? []) {
        const object = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: item.Key }));
        const total = JSON.parse((await object.Body?.transformToString()) ?? '{}') as Total;
        count += total.count;
        sum += total.sum;
        segments++;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return {
      seed: options.seed,
      records: options.records * options.shards,
      invocations,
      segments,
      injected,
      countOff: count - options.records * options.shards,
      sumOff: sum - expectedSum,
      processErrors,
      stalls,
      serverErrors,
    };
  } finally {
    client.destroy();
    await server.stop();
    await escapes.stop();
  }
}
