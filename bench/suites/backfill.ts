/**
 * Backfill from an export and by a parallel Scan, on the local servers (DynamoDB Local, the S3
 * server). Export: the same gzip DYNAMODB_JSON data files (~1 KB items with every type, seeded:
 * bench/lib/events.ts's images) read by backfillExportFile through a pipeline whose sink reads
 * every record's keys and image, against a hand-written loop — GetObject, gunzip, split lines,
 * JSON.parse, util-dynamodb's unmarshall of each Item — and that loop with the trust boundary's file
 * checks (bench/lib/backfill-workload.ts), over the same files; items per CPU-second (process CPU
 * time, all in this process, interleaved rounds, median of per-round ratios). Peak heap while one file
 * is backfilled, for files of growing size. Scan: items/s (wall) of runBackfill's parallel Scan
 * by segment count over one DynamoDB Local table.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { BatchWriteItemCommand, CreateTableCommand, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { backfillExportFile } from '../../src/backfill/export-file.js';
import { runBackfill } from '../../src/backfill/run-backfill.js';
import { startLocalAws } from '../../src/local/servers/local-aws.js';
import {
  BUCKET,
  backfillFiles,
  benchItems,
  checkedHandLoop,
  handLoop,
  type PutDataFile,
  putDataFile,
  timed,
} from '../lib/backfill-workload.js';
import { bytes, fixed, goal, int, ratio, table, whyMissed } from '../lib/markdown.js';
import { readingPipeline } from '../lib/reading-pipeline.js';
import { median, rotate } from '../lib/stats.js';
import type { Suite } from '../lib/suite.js';

const SEED = 20_261_127;
/** Issue 23: ≥ 0.9× the hand-written gunzip + JSON.parse + unmarshall loop. */
const HAND_TARGET = 0.9;
const TABLE = 'backfill-bench';

async function fillTable(aws: Awaited<ReturnType<typeof startLocalAws>>, count: number): Promise<void> {
  await aws.dynamodb.send(
    new CreateTableCommand({
      TableName: TABLE,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }),
  );
  const all = benchItems(count, SEED + 1);
  const chunks: WriteRequest[][] = [];
  for (let i = 0; i < all.length; i += 25)
    chunks.push(all.slice(i, i + 25).map((Item) => ({ PutRequest: { Item: Item as never } })));
  const limit = pLimit(8);
  await Promise.all(
    chunks.map((RequestItems) =>
      limit(() => aws.dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: RequestItems } }))),
    ),
  );
}

const suite: Suite = {
  name: 'backfill',
  title:
    'Backfill: export files vs a hand-written gunzip + JSON.parse + unmarshall loop; parallel Scan by segments',
  async run({ quick, log }) {
    const files = quick ? 3 : 6;
    const perFile = quick ? 3_000 : 10_000;
    const rounds = quick ? 3 : 5;
    const scanItems = quick ? 3_000 : 10_000;
    const aws = await startLocalAws();
    try {
      await aws.s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
      const data: PutDataFile[] = [];
      for (let f = 0; f < files; f++)
        data.push(
          await putDataFile(aws.s3, `bench/AWSDynamoDB/x/data/f${f}.json.gz`, perFile, SEED + 10 + f),
        );
      const gz = data.reduce((sum, f) => sum + f.gzipBytes, 0);
      log(`${files} files × ${int(perFile)} items (${bytes(gz)} gzip), ${rounds} rounds`);
      const variants = { ours: backfillFiles, hand: handLoop, checked: checkedHandLoop };
      const rates = { ours: [] as number[], hand: [] as number[], checked: [] as number[] };
      // One warm-up of each, then interleaved rounds, the order rotated round by round.
      for (const run of Object.values(variants)) await run(aws.s3, data.slice(0, 1));
      for (let r = 0; r < rounds; r++)
        for (const name of rotate(Object.keys(variants) as (keyof typeof variants)[], r)) {
          const t = await timed(() => variants[name](aws.s3, data));
          if (t.items !== files * perFile)
            throw new Error(`${name}: ${t.items} items, not ${files * perFile}`);
          rates[name].push((t.items / t.cpu) * 1000);
        }
      // Ratios round by round (both sides of a round share its load), then the median.
      const perRound = (of: number[], to: number[]) => median(of.map((rate, r) => rate / to[r]!));
      const oursRate = median(rates.ours);
      const handRate = median(rates.hand);
      const checkedRate = median(rates.checked);
      const handRatio = perRound(rates.ours, rates.hand);
      const checkedRatio = perRound(rates.ours, rates.checked);
      const checksRatio = perRound(rates.checked, rates.hand);
      log(
        `backfill ${int(oursRate)} items/CPU-s, hand loop ${int(handRate)} (${ratio(handRatio)}), ` +
          `checked loop ${int(checkedRate)} (${ratio(checkedRatio)})`,
      );

      // Live heap while one file is backfilled: a full collection every 10th batch, then heapUsed,
      // so garbage not yet collected does not count (it grows with the time between collections).
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      const memoryRows: string[][] = [];
      for (const count of quick ? [1_000, 4_000, 16_000] : [2_000, 10_000, 50_000]) {
        const key = `bench/AWSDynamoDB/x/data/mem-${count}.json.gz`;
        const size = (await putDataFile(aws.s3, key, count, SEED + count)).gzipBytes;
        gc();
        const base = process.memoryUsage().heapUsed;
        let peak = base;
        let batches = 0;
        const { pipeline } = readingPipeline('insert', () => {
          if (++batches % 10 !== 0) return;
          gc();
          peak = Math.max(peak, process.memoryUsage().heapUsed);
        });
        await backfillExportFile(
          pipeline,
          { bucket: BUCKET, key, exportType: 'FULL_EXPORT', exportTime: Date.now(), keyAttributes: ['pk'] },
          { client: aws.s3 },
        );
        memoryRows.push([int(count), bytes(size), bytes(Math.max(0, peak - base))]);
        log(`${int(count)} items (${bytes(size)}): live heap +${bytes(Math.max(0, peak - base))}`);
      }

      log(`scan: ${int(scanItems)} items in DynamoDB Local`);
      await fillTable(aws, scanItems);
      const scanRows: string[][] = [];
      const scanRates: Record<string, number> = {};
      for (const segments of [1, 2, 4, 8]) {
        const { pipeline } = readingPipeline('insert');
        const report = await runBackfill(pipeline, {
          source: { scan: { table: TABLE, segments } },
          dynamodb: aws.dynamodb,
          concurrency: segments,
        });
        const rate = report.itemsRead / (report.durationMs / 1000);
        scanRates[segments] = rate;
        scanRows.push([
          String(segments),
          int(report.itemsRead),
          fixed(report.durationMs / 1000, 2),
          int(rate),
        ]);
      }
      const markdown = [
        `${files} gzip DYNAMODB_JSON data files × ${int(perFile)} items (${bytes(gz)} compressed; seed ${SEED}; ~1 KB ` +
          'items with every attribute type, 20% with a 38-digit number) on the local S3 server (in this process, ' +
          `so its serving counts for every variant), read whole ${rounds} times by each variant after one warm-up ` +
          'file each, interleaved in one process with the order rotated each round. Method: process CPU time ' +
          '(every thread: zlib inflates on the libuv pool) per round; the table gives median rates, the ratios ' +
          'are medians of the per-round ratios (the two sides of a round share its load).',
        '',
        table(
          ['variant', 'items / CPU-s (median)'],
          [
            [
              'backfillExportFile (md5Checksum and itemCount given) → pipeline → sink reading keys and image',
              int(oursRate),
            ],
            ['hand loop: GetObject → gunzip → split → JSON.parse → util-dynamodb unmarshall', int(handRate)],
            [
              'checked hand loop: the same, holding the file to the trust boundary (MD5 and item count against the ' +
                'manifest, line-length and inflate-ratio bounds)',
              int(checkedRate),
            ],
          ],
          ['left', 'right'],
        ),
        '',
        goal('backfill, every image read, vs the hand-written loop', handRatio, HAND_TARGET, true, ratio),
        `- backfill vs the checked hand loop (the same file checks): ${ratio(checkedRatio)}; the checked loop ` +
          `at ${ratio(checksRatio)} the plain one (the checks' cost; medians of per-round ratios).`,
        '',
        handRatio < HAND_TARGET
          ? whyMissed('backfill')
          : 'What a profile of this workload shows, and what was changed after it: bench/why/backfill.md.',
        '',
        'The backfill does more per item than the loops: it checks every AttributeValue against ' +
          "DynamoDB's rules as it unmarshalls (`eager`), keeps numbers exact and decodes binaries, builds a Lambda-shaped " +
          'record, routes it and runs the sink through the engine with its retry and dead-letter rules.',
        '',
        'Live heap above the start while one file is backfilled (after a full collection every 10th batch of 100; ' +
          'the largest reading), by file size: flat, since a file is streamed and only one batch is held:',
        '',
        table(['items in the file', 'gzip size', 'peak live heap growth'], memoryRows, [
          'right',
          'right',
          'right',
        ]),
        '',
        `Parallel Scan of ${int(scanItems)} items in DynamoDB Local through runBackfill (wall time; one ` +
          'DynamoDB Local process on this machine, so segments beyond its cores add little):',
        '',
        table(['segments', 'items', 's', 'items / s'], scanRows, ['right', 'right', 'right', 'right']),
      ].join('\n');
      return {
        markdown,
        data: {
          oursRate,
          handRate,
          checkedRate,
          handRatio,
          checkedRatio,
          checksRatio,
          memoryRows,
          scanRates,
        },
      };
    } finally {
      await aws.stop();
    }
  },
};

export default suite;
