/**
 * Binary-heavy images (issue 37): tidewater's parser reading both images of records that carry
 * 1 to 3 binaries of 80 to 600 bytes per image (bench/lib/binary-records.ts), against two
 * references on the same records: the hand-written loop's unmarshaller (binaries
 * `Buffer.from(text, 'base64')`, slices of Node's pool shared by the whole process) and the same
 * loop with tidewater's isolation (decision 1: each image's binaries decoded natively into one
 * `Buffer.allocUnsafeSlow` of their own). CPU time in one process, the three interleaved round by
 * round, so the ratios are measured side by side under the same load; the median over the rounds.
 * The gap between the two loops is what the isolation costs.
 */
import { createRecordParser } from '../../src/records/parse.js';
import type { LambdaStreamRecord } from '../../src/records/types.js';
import { binaryHeavyRecords } from '../lib/binary-records.js';
import { fixed, int, table } from '../lib/markdown.js';
import { median, quartiles, rotate } from '../lib/stats.js';
import type { Suite } from '../lib/suite.js';
import { map as handUnmarshall } from '../peers/hand-loop.js';
import { map as isolatedUnmarshall } from '../peers/hand-loop-isolated.js';

const SEED = 20_261_129;

function countKeys(item: object | undefined): number {
  let n = 0;
  if (item !== undefined) for (const _ in item) n++;
  return n;
}

/** Made once, as a Lambda makes its parser once per container (see unmarshall-variants.ts). */
const parse = createRecordParser();

const variants = {
  tidewater: (records: readonly LambdaStreamRecord[]) => {
    let acc = 0;
    for (const raw of records) {
      const r = parse(raw);
      acc += countKeys(r.keys) + countKeys(r.newImage) + countKeys(r.oldImage);
    }
    return acc;
  },
  'hand-loop': (records: readonly LambdaStreamRecord[]) => {
    let acc = 0;
    for (const r of records) {
      const d = r.dynamodb;
      acc += countKeys(handUnmarshall(d.Keys as never));
      acc += countKeys(handUnmarshall(d.NewImage as never)) + countKeys(handUnmarshall(d.OldImage as never));
    }
    return acc;
  },
  'hand-loop-isolated': (records: readonly LambdaStreamRecord[]) => {
    let acc = 0;
    for (const r of records) {
      const d = r.dynamodb;
      acc += countKeys(isolatedUnmarshall(d.Keys as never));
      acc +=
        countKeys(isolatedUnmarshall(d.NewImage as never)) +
        countKeys(isolatedUnmarshall(d.OldImage as never));
    }
    return acc;
  },
};

type Variant = keyof typeof variants;

/** Per-round CPU nanoseconds per record of each variant, interleaved (order rotated by round). */
export function timeBinaries(count: number, rounds: number): Record<Variant, number[]> {
  const records = binaryHeavyRecords(SEED, count);
  const names = Object.keys(variants) as Variant[];
  const out = { tidewater: [], 'hand-loop': [], 'hand-loop-isolated': [] } as Record<Variant, number[]>;
  let checksum = 0;
  for (const name of names) for (let i = 0; i < 2; i++) checksum += variants[name](records);
  for (let round = 0; round < rounds; round++) {
    for (const name of rotate(names, round)) {
      const before = process.cpuUsage();
      checksum += variants[name](records);
      const cpu = process.cpuUsage(before);
      out[name].push(((cpu.user + cpu.system) * 1000) / count);
    }
  }
  if (checksum === 0) throw new Error('binaries: no output');
  return out;
}

const suite: Suite = {
  name: 'binaries',
  title: 'Binary-heavy images: tidewater vs the hand-written loop, with and without isolation',
  async run({ quick, log }) {
    const count = quick ? 2_000 : 10_000;
    const rounds = quick ? 9 : 21;
    log(`${int(count)} records with 1–3 binaries of 80–600 bytes per image, ${rounds} rounds`);
    const ns = timeBinaries(count, rounds);
    /** Median of the per-round ratios of b's time to a's: a's rate ÷ b's. */
    const rateRatio = (a: Variant, b: Variant) => median(ns[a].map((t, i) => ns[b][i]! / t));
    const isolationCost = rateRatio('hand-loop-isolated', 'hand-loop');
    const row = (name: string, values: number[]) => {
      const { q1, q3 } = quartiles(values);
      return [name, fixed(median(values) / 1000, 2), `${fixed(q1 / 1000, 2)}–${fixed(q3 / 1000, 2)}`];
    };
    const markdown = [
      `Method: unmarshall only (no handler, no event \`JSON.parse\`), the three variants in one process, interleaved round by round (order rotated), CPU time. ${int(count)} seeded records (seed ${SEED}; the unmarshall suite's ~1 KB items of every type) with 1 to 3 more binaries of 80 to 600 bytes in each image; both images and the keys of every record read, ${rounds} rounds, median and interquartile range. tidewater decodes binaries to Uint8Array, those over 64 bytes natively into one memory per image (docs/records.md); the hand-written loop calls \`Buffer.from(text, 'base64')\` per binary (views of Node's pool, shared by every Buffer of the process) and keeps long numbers as strings; the isolated loop is the same loop with each image's binaries decoded natively (\`buf.write(text, offset, 'base64')\`) into one \`Buffer.allocUnsafeSlow\` of their own.`,
      '',
      table(
        ['variant', 'µs / record (median)', 'interquartile'],
        [
          row('tidewater (parse + keys + both images)', ns.tidewater),
          row('hand-written loop (Node pool)', ns['hand-loop']),
          row("hand-written loop, each image's binaries in memory of their own", ns['hand-loop-isolated']),
        ],
        ['left', 'right', 'right'],
      ),
      '',
      `tidewater at ${fixed(rateRatio('tidewater', 'hand-loop-isolated'), 2)}× the isolated loop's rate (goal ≥ 0.9×) and ${fixed(rateRatio('tidewater', 'hand-loop'), 2)}× the plain loop's (medians of the per-round ratios).`,
      '',
      `What the isolation costs: the isolated loop runs at ${fixed(isolationCost, 2)}× the plain loop's rate (${fixed((1 - isolationCost) * 100, 0)}% ${isolationCost <= 1 ? 'slower' : 'faster'}): one off-heap allocation per image instead of slices of Node's pool.`,
    ].join('\n');
    return { markdown, data: { count, rounds, ns } };
  },
};

export default suite;
