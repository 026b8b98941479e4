/**
 * Unmarshall + classify throughput: tidewater's parser against @aws-sdk/util-dynamodb's
 * `unmarshall` on the same seeded records (bench/lib/events.ts: ~1 KB items with every type,
 * one in five carrying a 38-digit number). Ratios are measured in the same process and run,
 * rounds rotating the order so neither side always runs warm or cold.
 */
import { unmarshall as sdkUnmarshall } from '@aws-sdk/util-dynamodb';
import { parseStreamEvent } from '../../src/records/index.js';
import type { LambdaStreamRecord } from '../../src/records/types.js';
import { generateRecords } from '../lib/events.js';
import { fixed, goal, int, ratio, table } from '../lib/markdown.js';
import { median, nowMs, quartiles, rotate } from '../lib/stats.js';

const SEED = 20_261_122;
const TARGET_RATIO = 4;

interface Variant {
  name: string;
  note: string;
  /** Processes every record once; returns a number derived from the output so none of it is dead code. */
  run(records: LambdaStreamRecord[]): number;
}

function sdkKind(record: LambdaStreamRecord): string {
  if (record.eventName === 'INSERT') return 'insert';
  if (record.eventName === 'MODIFY') return 'modify';
  const ui = record.userIdentity;
  return ui?.type === 'Service' && ui.principalId === 'dynamodb.amazonaws.com' ? 'ttl-delete' : 'user-delete';
}

function countKeys(item: object | undefined): number {
  let n = 0;
  if (item !== undefined) for (const _ in item) n++;
  return n;
}

const variants: Variant[] = [
  {
    name: 'tidewater (parse + classify + keys + both images)',
    note: "parseStreamEvent, then every record's keys, newImage and oldImage read (full unmarshall, exact numbers, binaries decoded to Uint8Array)",
    run(records) {
      let acc = 0;
      for (const r of parseStreamEvent({ Records: records })) {
        acc += r.kind.length + countKeys(r.keys) + countKeys(r.newImage) + countKeys(r.oldImage);
      }
      return acc;
    },
  },
  {
    name: '@aws-sdk/util-dynamodb unmarshall (+ hand classify)',
    note: 'unmarshall of Keys, NewImage and OldImage per record, eventName/userIdentity checked by hand; numbers lossy-or-bigint, binaries left as base64 strings',
    run(records) {
      let acc = 0;
      for (const r of records) {
        const d = r.dynamodb;
        acc += sdkKind(r).length + countKeys(sdkUnmarshall(d.Keys as never));
        if (d.NewImage) acc += countKeys(sdkUnmarshall(d.NewImage as never));
        if (d.OldImage) acc += countKeys(sdkUnmarshall(d.OldImage as never));
      }
      return acc;
    },
  },
  {
    name: '@aws-sdk/util-dynamodb unmarshall, wrapNumbers (exact)',
    note: "as above with wrapNumbers: true, util-dynamodb's only mode that keeps every number exact",
    run(records) {
      let acc = 0;
      for (const r of records) {
        const d = r.dynamodb;
        acc += sdkKind(r).length + countKeys(sdkUnmarshall(d.Keys as never, { wrapNumbers: true }));
        if (d.NewImage) acc += countKeys(sdkUnmarshall(d.NewImage as never, { wrapNumbers: true }));
        if (d.OldImage) acc += countKeys(sdkUnmarshall(d.OldImage as never, { wrapNumbers: true }));
      }
      return acc;
    },
  },
  {
    name: 'tidewater parse + classify only (lazy)',
    note: 'parseStreamEvent and kind; images never read, so never unmarshalled (what a filter-then-route handler pays for records it drops)',
    run(records) {
      let acc = 0;
      for (const r of parseStreamEvent({ Records: records })) acc += r.kind.length + r.sequenceNumber.length;
      return acc;
    },
  },
];

export default {
  name: 'unmarshall',
  title: 'Unmarshall and classify: tidewater vs @aws-sdk/util-dynamodb',
  async run({ quick, log }: { quick: boolean; log: (m: string) => void }) {
    const count = quick ? 2_000 : 20_000;
    const rounds = quick ? 5 : 15;
    const records = generateRecords({ seed: SEED, count });
    log(`${count} records, ${rounds} rounds`);
    for (const v of variants) for (let i = 0; i < 2; i++) v.run(records);
    const samples = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    let sink = 0;
    for (let round = 0; round < rounds; round++) {
      for (const v of rotate(variants, round)) {
        const start = nowMs();
        sink += v.run(records);
        samples.get(v.name)!.push(((nowMs() - start) * 1e6) / count);
      }
    }
    const nsPerRecord = new Map([...samples].map(([name, values]) => [name, median(values)]));
    const ours = nsPerRecord.get(variants[0]!.name)!;
    const sdk = nsPerRecord.get(variants[1]!.name)!;
    const rows = variants.map((v) => {
      const values = samples.get(v.name)!;
      const { q1, q3 } = quartiles(values);
      const ns = nsPerRecord.get(v.name)!;
      return [
        v.name,
        fixed(ns / 1000, 2),
        `${fixed(q1 / 1000, 2)}–${fixed(q3 / 1000, 2)}`,
        int(1e9 / ns),
        ratio(sdk / ns),
      ];
    });
    const speedup = sdk / ours;
    const lazySpeedup = sdk / nsPerRecord.get(variants[3]!.name)!;
    log(
      `tidewater ${fixed(ours / 1000, 2)} µs/record, util-dynamodb ${fixed(sdk / 1000, 2)} µs/record: ${ratio(speedup)}`,
    );
    const markdown = [
      `${int(count)} seeded records (seed ${SEED}; 45% insert, 45% modify, 5% user delete, 5% TTL delete; ` +
        'NEW_AND_OLD_IMAGES, ~1 KB items with every attribute type, 20% carrying a 38-digit number), ' +
        `median of ${rounds} rounds, order rotated each round.`,
      '',
      table(['variant', 'µs / record (median)', 'interquartile', 'records / s', 'vs util-dynamodb'], rows, [
        'left',
        'right',
        'right',
        'right',
        'right',
      ]),
      '',
      goal('tidewater, every image read, vs util-dynamodb', speedup, TARGET_RATIO, true, ratio),
      goal(
        'tidewater parse + classify (images read on demand) vs util-dynamodb',
        lazySpeedup,
        TARGET_RATIO,
        true,
        ratio,
      ),
      '',
      ...variants.map((v) => `- **${v.name}**: ${v.note}.`),
      '',
      'tidewater does strictly more work per record than util-dynamodb here: it validates every ' +
        'AttributeValue (one type key), keeps numbers exact and decodes binaries, where util-dynamodb ' +
        'returns base64 strings untouched.',
    ].join('\n');
    return {
      markdown,
      data: {
        count,
        rounds,
        nsPerRecord: Object.fromEntries(nsPerRecord),
        speedup,
        lazySpeedup,
        checksum: sink,
      },
    };
  },
};
