import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { parser } from '@aws-lambda-powertools/batch/parser';
import { KinesisDynamoDBStreamSchema } from '@aws-lambda-powertools/parser/schemas/kinesis';
import type { Context, KinesisStreamEvent } from 'aws-lambda';
import { createPipeline, kinesisSource } from '../../src/pipeline/index.js';
import { type LambdaKinesisRecord, toKinesisRecord } from '../../src/records/index.js';
import { generateRecords } from '../lib/events.js';
import { fixed, int, ratio, table } from '../lib/markdown.js';
import { median } from '../lib/stats.js';
import { map as handUnmarshall } from '../peers/hand-loop.js';

/**
 * Kinesis Data Streams for DynamoDB: batches of Kinesis records (base64 JSON change records), every
 * record's keys and images read. tidewater's pipeline (`source: kinesisSource()`: decode, check,
 * classify, per-item order and duplicate check, lazy lossless images) against Powertools' parser
 * schema for DynamoDB-stream-to-Kinesis records run by its BatchProcessor, and against a hand-written
 * base64 + JSON.parse + unmarshall loop (the ceiling: no checks, no ordering).
 */

const BATCH = 100;
const CONTEXT = { getRemainingTimeInMillis: () => 900_000 } as unknown as Context;

function kinesisEvents(batches: number): { Records: LambdaKinesisRecord[] }[] {
  const records = generateRecords({ seed: 26, count: batches * BATCH, tableName: 'orders' });
  const kinesis = records.map((r, i) =>
    toKinesisRecord(r, {
      sequenceNumber: (
        49657828409187701520019995242508390119953358325192n * 1_000_000n +
        BigInt(i)
      ).toString(),
      tableName: 'orders',
      streamArn: 'arn:aws:kinesis:us-east-1:123456789012:stream/orders-changes',
    }),
  );
  // Powertools' schema requires invokeIdentityArn, which Lambda sets on every record.
  for (const r of kinesis) Object.assign(r, { invokeIdentityArn: 'arn:aws:iam::123456789012:role/consumer' });
  const out = [];
  for (let b = 0; b < batches; b++) out.push({ Records: kinesis.slice(b * BATCH, (b + 1) * BATCH) });
  return out;
}

type Run = (event: { Records: LambdaKinesisRecord[] }) => Promise<number>;

function tidewater(): Run {
  let read = 0;
  const take = (r: { keys: unknown; newImage: unknown; oldImage: unknown }) => {
    if (r.keys !== undefined) read++;
    if (r.newImage !== undefined) read++;
    if (r.oldImage !== undefined) read++;
  };
  const pipeline = createPipeline({
    source: kinesisSource(),
    handlers: { insert: take, modify: take, 'user-delete': take, 'ttl-delete': take },
    metrics: false,
  });
  return async (event) => {
    read = 0;
    await pipeline.process(event, CONTEXT);
    return read;
  };
}

function powertools(): Run {
  const processor = new BatchProcessor(EventType.KinesisDataStreams, {
    parser,
    schema: KinesisDynamoDBStreamSchema.shape.Records.element,
  });
  let read = 0;
  const handler = async (record: { kinesis: { data: { dynamodb: Record<string, unknown> } } }) => {
    const d = record.kinesis.data.dynamodb;
    if (d.Keys !== undefined) read++;
    if (d.NewImage !== undefined) read++;
    if (d.OldImage !== undefined) read++;
  };
  return async (event) => {
    read = 0;
    const response = await processPartialResponse(
      event as unknown as KinesisStreamEvent,
      handler as never,
      processor,
      {
        context: CONTEXT,
      },
    );
    if (response.batchItemFailures.length !== 0) throw new Error('Powertools failed records');
    return read;
  };
}

function handLoop(): Run {
  return async (event) => {
    let read = 0;
    for (const r of event.Records) {
      const change = JSON.parse(Buffer.from(r.kinesis.data, 'base64').toString('utf8'));
      const d = change.dynamodb;
      if (handUnmarshall(d.Keys) !== undefined) read++;
      if (handUnmarshall(d.NewImage) !== undefined) read++;
      if (handUnmarshall(d.OldImage) !== undefined) read++;
    }
    return read;
  };
}

export default {
  name: 'kinesis',
  title: 'Kinesis Data Streams for DynamoDB',
  async run({ quick, log }: { quick: boolean; log: (m: string) => void }) {
    const events = kinesisEvents(quick ? 50 : 200);
    const rounds = quick ? 5 : 15;
    const peers: [string, Run][] = [
      ['tidewater', tidewater()],
      ['Powertools parser + BatchProcessor', powertools()],
      ['hand loop (base64 + JSON.parse + unmarshall)', handLoop()],
    ];
    const reads = new Map<string, number>();
    for (const [name, run] of peers) {
      let total = 0;
      for (const e of events) total += await run(e); // warm-up, and every peer reads the same images
      reads.set(name, total);
    }
    const expected = reads.get('tidewater');
    for (const [name, total] of reads)
      if (total !== expected) throw new Error(`${name} read ${total} images, tidewater ${expected}`);
    const times = new Map<string, number[]>(peers.map(([name]) => [name, []]));
    for (let round = 0; round < rounds; round++) {
      // Rotated order each round, so no peer always runs after the same one's garbage.
      for (let k = 0; k < peers.length; k++) {
        const [name, run] = peers[(round + k) % peers.length]!;
        const started = performance.now();
        for (const e of events) await run(e);
        times.get(name)!.push(performance.now() - started);
      }
      log(`round ${round + 1}/${rounds}`);
    }
    const recordCount = events.length * BATCH;
    const rate = (name: string) => recordCount / (median(times.get(name)!) / 1000);
    const ours = rate('tidewater');
    const rows = peers.map(([name]) => [name, int(rate(name)), ratio(ours / rate(name))]);
    const vsPowertools = ours / rate('Powertools parser + BatchProcessor');
    const vsHand = ours / rate('hand loop (base64 + JSON.parse + unmarshall)');
    const markdown = [
      `${int(recordCount)} Kinesis records (batches of ${BATCH}, the throughput suite's event mix) per round, median of ${rounds} rounds; every record's keys and images read (${int(expected!)} maps).`,
      '',
      table(['implementation', 'records/s', 'tidewater ×'], rows),
      '',
      `Goals: ≥ 4× Powertools (${fixed(vsPowertools, 2)}×), ≥ 0.9× the hand loop (${fixed(vsHand, 2)}×).`,
    ].join('\n');
    return {
      markdown,
      data: { recordCount, rounds, rates: Object.fromEntries(peers.map(([n]) => [n, rate(n)])) },
    };
  },
};
