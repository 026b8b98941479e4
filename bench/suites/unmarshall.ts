/**
 * Unmarshall + classify throughput: tidewater's parser against the hand-written loop's minimal
 * unmarshaller (the throughput suite's ceiling) and @aws-sdk/util-dynamodb's `unmarshall` on the
 * same seeded records (bench/lib/events.ts: ~1 KB items with every type,
 * one in five carrying a 38-digit number). Each variant runs in fresh processes of its own
 * (bench/lib/unmarshall-worker.ts), several per variant, interleaved in rotating order; the
 * median is over every round of every process.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixed, goal, int, ratio, table, whyMissed } from '../lib/markdown.js';
import { median, quartiles, rotate } from '../lib/stats.js';
import { variants } from '../lib/unmarshall-variants.js';

const SEED = 20_261_122;
const TARGET_RATIO = 4;
/** Issue 14: the parser loop at ≥ 0.9× the hand-written loop. */
const HAND_TARGET = 0.9;

const worker = join(dirname(fileURLToPath(import.meta.url)), '..', 'lib', 'unmarshall-worker.ts');

function runWorker(
  index: number,
  count: number,
  rounds: number,
): { nsPerRecord: number[]; checksum: number } {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', worker, String(index), String(count), String(rounds), String(SEED)],
    { encoding: 'utf8', env: process.env },
  );
  if (result.status !== 0)
    throw new Error(`unmarshall worker ${index} exited ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop() as string) as {
    nsPerRecord: number[];
    checksum: number;
  };
}

export default {
  name: 'unmarshall',
  title: 'Unmarshall and classify: tidewater vs the hand-written loop and @aws-sdk/util-dynamodb',
  async run({ quick, log }: { quick: boolean; log: (m: string) => void }) {
    const count = quick ? 4_000 : 20_000;
    const rounds = quick ? 8 : 15;
    const processes = quick ? 2 : 3;
    log(`${count} records, ${processes} process(es) × ${rounds} rounds per variant`);
    const samples = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    let sink = 0;
    const indexed = variants.map((v, index) => ({ v, index }));
    for (let p = 0; p < processes; p++) {
      for (const { v, index } of rotate(indexed, p)) {
        const out = runWorker(index, count, rounds);
        samples.get(v.name)!.push(...out.nsPerRecord);
        sink += out.checksum;
      }
    }
    const nsPerRecord = new Map([...samples].map(([name, values]) => [name, median(values)]));
    const ns = (id: string): number => {
      const v = variants.find((x) => x.id === id);
      if (v === undefined) throw new Error(`no unmarshall variant ${id}`);
      return nsPerRecord.get(v.name) as number;
    };
    const ours = ns('tidewater');
    const sdk = ns('util-dynamodb');
    const hand = ns('hand-loop');
    const rows = variants.map((v) => {
      const values = samples.get(v.name)!;
      const { q1, q3 } = quartiles(values);
      const it = nsPerRecord.get(v.name)!;
      return [
        v.name,
        fixed(it / 1000, 2),
        `${fixed(q1 / 1000, 2)}–${fixed(q3 / 1000, 2)}`,
        int(1e9 / it),
        ratio(hand / it),
        ratio(sdk / it),
      ];
    });
    const speedup = sdk / ours;
    const handRatio = hand / ours;
    const validateSpeedup = sdk / ns('tidewater-validate');
    const lazySpeedup = sdk / ns('tidewater-lazy');
    log(
      `tidewater ${fixed(ours / 1000, 2)} µs/record, hand loop ${fixed(hand / 1000, 2)}, util-dynamodb ${fixed(sdk / 1000, 2)}: ${ratio(handRatio)} the hand loop, ${ratio(speedup)} util-dynamodb`,
    );
    const markdown = [
      `${int(count)} seeded records (seed ${SEED}; 45% insert, 45% modify, 5% user delete, 5% TTL delete; ` +
        'NEW_AND_OLD_IMAGES, ~1 KB items with every attribute type, 20% carrying a 38-digit number), ' +
        `each variant timed alone in ${processes} fresh process(es) of ${rounds} rounds (after 2 warm-up rounds), ` +
        'processes interleaved in rotating order; median over all rounds. Process CPU time per round. ' +
        'tidewater runs from `dist/`.',
      '',
      table(
        [
          'variant',
          'µs / record (median)',
          'interquartile',
          'records / s',
          'vs hand loop',
          'vs util-dynamodb',
        ],
        rows,
        ['left', 'right', 'right', 'right', 'right', 'right'],
      ),
      '',
      goal(
        "tidewater, every image read, vs the hand-written loop's unmarshaller",
        handRatio,
        HAND_TARGET,
        true,
        ratio,
      ),
      goal('tidewater, every image read, vs util-dynamodb', speedup, TARGET_RATIO, true, ratio),
      goal(
        'tidewater parse + classify (images read on demand) vs util-dynamodb',
        lazySpeedup,
        TARGET_RATIO,
        true,
        ratio,
      ),
      `- tidewater parse + classify + structural validation (\`validate: true\`, opt-in) vs util-dynamodb: ${ratio(validateSpeedup)} (reported; no goal)`,
      ...(speedup < TARGET_RATIO || handRatio < HAND_TARGET ? ['', whyMissed('unmarshall')] : []),
      '',
      ...variants.map((v) => `- **${v.name}**: ${v.note}.`),
      '',
      'tidewater does strictly more work per record than util-dynamodb here: it validates every ' +
        'AttributeValue (one type key), keeps numbers exact and decodes binaries, where util-dynamodb ' +
        'returns base64 strings untouched. It also does more than the hand-written loop, which checks ' +
        "nothing, keeps numbers over 15 characters as strings and hands out views of Node's Buffer pool.",
    ].join('\n');
    return {
      markdown,
      data: {
        count,
        rounds,
        nsPerRecord: Object.fromEntries(nsPerRecord),
        speedup,
        handRatio,
        validateSpeedup,
        lazySpeedup,
        checksum: sink,
      },
    };
  },
};
