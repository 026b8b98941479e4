/**
 * The binary-heavy workload (issue 37): the benchmarks' seeded records (bench/lib/events.ts) with
 * 1 to 3 more binaries of 80 to 600 bytes in every image, the size an image holds as a thumbnail,
 * a signature or an encrypted field. Binaries over 64 bytes are the ones tidewater decodes into
 * one memory per image, so this is where its decoder's speed shows.
 */
import type { AttributeMap, LambdaStreamEvent, LambdaStreamRecord } from '../../src/records/types.js';
import { generateRecords } from './events.js';
import { createRandom, type Random } from './random.js';

function withBinaries(image: AttributeMap | undefined, random: Random): AttributeMap | undefined {
  if (image === undefined) return undefined;
  const out: AttributeMap = { ...image };
  const count = random.int(1, 3);
  for (let i = 0; i < count; i++)
    out[`blob${i}`] = { B: Buffer.from(random.bytes(random.int(80, 600))).toString('base64') };
  return out;
}

export function binaryHeavyRecords(seed: number, count: number): LambdaStreamRecord[] {
  const random = createRandom(seed ^ 0xb1);
  return generateRecords({ seed, count }).map((record) => ({
    ...record,
    dynamodb: {
      ...record.dynamodb,
      NewImage: withBinaries(record.dynamodb.NewImage, random),
      OldImage: withBinaries(record.dynamodb.OldImage, random),
    },
  }));
}

/** `count` consecutive batches of `batchSize` binary-heavy records, as generateBatches cuts them. */
export function binaryHeavyBatches(seed: number, batchSize: number, count: number): LambdaStreamEvent[] {
  const all = binaryHeavyRecords(seed, batchSize * count);
  const batches: LambdaStreamEvent[] = [];
  for (let i = 0; i < count; i++) batches.push({ Records: all.slice(i * batchSize, (i + 1) * batchSize) });
  return batches;
}
