import { describe, expect, it } from 'vitest';
import { backfillPipeline } from '../../../src/backfill/backfill-pipeline.js';
import { backfillSequenceNumber, itemRecord } from '../../../src/backfill/backfill-record.js';
import { deliverBatch, deliverCounted } from '../../../src/backfill/deliver-batch.js';
import { createPipeline } from '../../../src/pipeline/engine.js';
import { ttlHealth } from '../../../src/pipeline/ttl-health.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { MemoryDeadLetterSink } from '../../../src/sinks/memory-dead-letter-sink.js';
import { MemorySink } from '../../../src/sinks/memory-sink.js';
import { quietLogger } from '../../support/backfill-table.js';

const origin = { source: 'backfill', from: 'scan', snapshotTime: 1_767_323_045_000 } as const;
const context = { tableArn: 'arn:aws:dynamodb:us-east-1:123456789012:table/t', region: 'us-east-1' };

function records(n: number) {
  return Array.from({ length: n }, (_, i) =>
    itemRecord(
      { pk: { S: `k${i}` } },
      ['pk'],
      1_767_323_045,
      { eventID: `scan:0#${i + 1}`, sequenceNumber: backfillSequenceNumber(0, i + 1) },
      context,
    ),
  );
}

describe('a backfill batch through the engine', () => {
  it("runs the user's config unchanged, its records carrying the backfill origin; the stream pipeline keeps its own", async () => {
    const sink = new MemorySink();
    const config = {
      routes: [{ when: 'insert' as const, to: sink }],
      metrics: false as const,
      logger: quietLogger,
    };
    const before = { ...config, routes: [...config.routes] };
    const stream = createPipeline(config);
    const run = backfillPipeline(stream, origin);
    expect(await deliverBatch(run.pipeline, records(3), 1)).toEqual({ done: 3, error: undefined });
    expect(sink.records.map((r: ClassifiedRecord) => r.origin)).toEqual([origin, origin, origin]);
    await stream.process({ Records: records(4).slice(3) });
    expect(sink.records.at(-1)?.origin).toEqual({ source: 'dynamodb-stream' });
    expect(config).toEqual(before);
    expect(config.routes[0]!.to).toBe(sink);
  });

  it('a partial failure is sent again from the failed record, as Lambda retries; the records before it are done once', async () => {
    const seen: string[] = [];
    const sink = new MemorySink({
      failWhen: (record, delivery) => {
        seen.push(record.eventID);
        return record.eventID === 'scan:0#3' && delivery < 3;
      },
    });
    const run = backfillPipeline(
      { routes: [{ when: 'insert', to: sink }], metrics: false, logger: quietLogger, retry: { attempts: 1 } },
      origin,
    );
    expect(await deliverBatch(run.pipeline, records(4), 3)).toEqual({ done: 4, error: undefined });
    expect(seen).toEqual([
      'scan:0#1',
      'scan:0#2',
      'scan:0#3',
      'scan:0#4',
      'scan:0#3',
      'scan:0#4',
      'scan:0#3',
      'scan:0#4',
    ]);
    expect(sink.records.map((r) => r.eventID)).toEqual(['scan:0#1', 'scan:0#2', 'scan:0#3', 'scan:0#4']);
  });

  it('a record that keeps failing stops the batch there after the attempts, naming it', async () => {
    const sink = new MemorySink({ failWhen: (record) => record.eventID === 'scan:0#2' });
    const run = backfillPipeline(
      { routes: [{ when: 'insert', to: sink }], metrics: false, logger: quietLogger, retry: { attempts: 1 } },
      origin,
    );
    const outcome = await deliverBatch(run.pipeline, records(3), 2);
    expect(outcome).toEqual({
      done: 1,
      error: `record ${backfillSequenceNumber(0, 2)} failed (the pipeline's log says why)`,
    });
  });

  it('counts what the dead-letter sink stored apart from what was delivered', async () => {
    const deadLetter = new MemoryDeadLetterSink();
    const sink = new MemorySink({ failWhen: (record) => record.eventID === 'scan:0#2' });
    const run = backfillPipeline(
      {
        routes: [{ when: 'insert', to: sink }],
        deadLetter,
        metrics: false,
        logger: quietLogger,
        retry: { attempts: 1 },
      },
      origin,
    );
    expect(await deliverCounted(run, records(3), 1)).toEqual({
      done: 3,
      error: undefined,
      delivered: 2,
      deadLettered: 1,
    });
    expect(deadLetter.entries.map((e) => e.eventID)).toEqual(['scan:0#2']);
  });

  it("the pipeline's TTL health check applies: an item whose TTL is in milliseconds is reported, naming where it was read", async () => {
    const warned: Record<string, unknown>[] = [];
    const logger = {
      ...quietLogger,
      warn: (fields: object) => warned.push(fields as Record<string, unknown>),
      child: () => logger,
    };
    const run = backfillPipeline(
      {
        routes: [{ when: 'insert', to: new MemorySink() }],
        metrics: false,
        logger,
        ttlAttribute: ttlHealth('expiresAt'),
      },
      origin,
    );
    const [good, bad] = [1_900_000_000, 1_900_000_000_000].map((ttl, i) =>
      itemRecord(
        { pk: { S: `k${i}` }, expiresAt: { N: String(ttl) } },
        ['pk'],
        1_767_323_045,
        { eventID: `scan:0#${i + 1}`, sequenceNumber: backfillSequenceNumber(0, i + 1) },
        context,
      ),
    );
    await deliverBatch(run.pipeline, [good!, bad!], 1);
    expect(warned).toEqual([expect.objectContaining({ eventID: 'scan:0#2', ttlAttribute: 'expiresAt' })]);
  });
});
