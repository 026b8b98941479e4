/**
 * Binary-heavy images (issue 37): tidewater's parser reading both images of records that carry
 * 1 to 3 binaries of 80 to 600 bytes per image (bench/lib/binary-records.ts), against the
 * hand-written loop's unmarshaller (binaries `Buffer.from(text, 'base64')`) on the same records.
 * CPU time in one process, the two interleaved round by round, so the ratio is measured side by
 * side under the same load; the median over the rounds.
 */
import { createRecordParser } from '../../src/records/parse.js';
import type { LambdaStreamRecord } from '../../src/records/types.js';
import { binaryHeavyRecords } from '../lib/binary-records.js';
import { fixed, int, table } from '../lib/markdown.js';
import { median, quartiles } from '../lib/stats.js';
import type { Suite } from '../lib/suite.js';
import { map as handUnmarshall } from '../peers/hand-loop.js';

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
};

/** Per-round CPU nanoseconds per record of each variant, interleaved (order alternating by round). */
export function timeBinaries(count: number, rounds: number): Record<keyof typeof variants, number[]> {
  const records = binaryHeavyRecords(SEED, count);
  const names = Object.keys(variants) as (keyof typeof variants)[];
  const out = { tidewater: [] as number[], 'hand-loop': [] as number[] };
  let checksum = 0;
  for (const name of names) for (let i = 0; i < 2; i++) checksum += variants[name](records);
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
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
  title: 'Binary-heavy images: tidewater vs the hand-written loop',
  async run({ quick, log }) {
    const count = quick ? 2_000 : 10_000;
    const rounds = quick ? 9 : 21;
    log(`${int(count)} records with 1–3 binaries of 80–600 bytes per image, ${rounds} rounds`);
    const ns = timeBinaries(count, rounds);
    const ratios = ns.tidewater.map((t, i) => ns['hand-loop'][i]! / t);
    const row = (name: string, values: number[]) => {
      const { q1, q3 } = quartiles(values);
      return [name, fixed(median(values) / 1000, 2), `${fixed(q1 / 1000, 2)}–${fixed(q3 / 1000, 2)}`];
    };
    const markdown = [
      `${int(count)} seeded records (seed ${SEED}; the unmarshall suite's ~1 KB items of every type) with 1 to 3 more binaries of 80 to 600 bytes in each image; both images and the keys of every record read, ${rounds} rounds interleaved in one process (CPU time), median and interquartile range. tidewater decodes binaries to Uint8Array, those over 64 bytes natively into one memory per image (docs/records.md); the hand-written loop calls \`Buffer.from(text, 'base64')\` per binary (views of Node's shared pool) and keeps long numbers as strings.`,
      '',
      table(
        ['variant', 'µs / record (median)', 'interquartile'],
        [
          row('tidewater (parse + keys + both images)', ns.tidewater),
          row('hand-written loop', ns['hand-loop']),
        ],
        ['left', 'right', 'right'],
      ),
      '',
      `tidewater at ${fixed(median(ratios), 2)}× the hand-written loop's rate (median of the per-round ratios).`,
    ].join('\n');
    return { markdown, data: { count, rounds, ns } };
  },
};

export default suite;
