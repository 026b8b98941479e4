/**
 * The backfill suite's export workload, one variant at a time, for a CPU profile or an A/B timing
 * in a fresh process (bench/why/backfill.md):
 *
 *   node --import tsx bench/lib/backfill-profile.ts all 9            # every variant, interleaved, CPU time
 *   node --import tsx bench/lib/backfill-profile.ts backfill 8 /tmp/bf.cpuprofile
 *
 * With a third argument the rounds (not the setup, not the warm-up) are CPU-profiled through
 * node:inspector into that file (bench/lib/cpuprofile-top.ts reads it). V8's profiler samples wall
 * time: a thread blocked (on a lock, preempted on a loaded machine) keeps collecting samples. For
 * on-CPU time of every thread (zlib inflates on libuv's pool), run it under `perf record` started
 * paused, with PERF_CTL naming its control FIFO: the rounds are recorded, the setup is not —
 *
 *   mkfifo /tmp/ctl; perf record -e task-clock -F 1999 -g --control fifo:/tmp/ctl -D -1 -o /tmp/bf.data \
 *     env PERF_CTL=/tmp/ctl node --perf-basic-prof --import tsx bench/lib/backfill-profile.ts backfill 8
 *   perf report -i /tmp/bf.data --no-children --sort sym --stdio
 *
 * Variants: `backfill` (backfillExportFile → pipeline → sink reading keys and image), `hand` (the
 * plain loop), `checked` (the loop with the trust boundary's file checks). tidewater is loaded from
 * dist/ as the suites load it (`npm run build` first), from src/ with TIDEWATER_BENCH_SOURCE=src.
 * Prints each variant's median items per CPU-second and the median of its per-round ratios to the first.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { register } from 'node:module';
import { median } from './stats.js';

const SEED = 20_261_127;

async function main(): Promise<void> {
  if (process.env.TIDEWATER_BENCH_SOURCE !== 'src') register('./use-dist.mjs', import.meta.url);
  const { CreateBucketCommand } = await import('@aws-sdk/client-s3');
  const { startLocalAws } = await import('../../src/local/servers/local-aws.js');
  const { BUCKET, backfillFiles, checkedHandLoop, handLoop, putDataFile, timed } = await import(
    './backfill-workload.js'
  );
  const variants = { backfill: backfillFiles, hand: handLoop, checked: checkedHandLoop } as const;
  type Variant = keyof typeof variants;
  const which = process.argv[2] ?? 'all';
  const rounds = Number(process.argv[3] ?? 5);
  const profileTo = process.argv[4];
  const names: Variant[] =
    which === 'all' ? ['hand', 'checked', 'backfill'] : (which.split(',') as Variant[]);
  if (!names.every((n) => n in variants))
    throw new Error(`usage: backfill-profile.ts backfill|hand|checked|all [rounds]`);
  const aws = await startLocalAws();
  try {
    await aws.s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const files: Awaited<ReturnType<typeof putDataFile>>[] = [];
    // The suite's --quick size unless told (its full run: BACKFILL_FILES=6 BACKFILL_ITEMS=10000).
    const count = Number(process.env.BACKFILL_FILES ?? 3);
    const perFile = Number(process.env.BACKFILL_ITEMS ?? 3_000);
    for (let f = 0; f < count; f++)
      files.push(await putDataFile(aws.s3, `bench/AWSDynamoDB/x/data/f${f}.json.gz`, perFile, SEED + 10 + f));
    for (const n of names) await variants[n](aws.s3, files.slice(0, 1));
    // A marker for --trace-opt / --trace-deopt logs: what follows happened during the timed rounds.
    console.log(`warm-up done; ${rounds} timed rounds`);
    const session = profileTo === undefined ? undefined : new Session();
    session?.connect();
    await session?.post('Profiler.enable');
    await session?.post('Profiler.start');
    if (process.env.PERF_CTL !== undefined) appendFileSync(process.env.PERF_CTL, 'enable\n');
    const rates: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < rounds; r++)
      for (const n of names) {
        const t = await timed(() => variants[n](aws.s3, files));
        rates[n]!.push((t.items / t.cpu) * 1000);
      }
    if (process.env.PERF_CTL !== undefined) appendFileSync(process.env.PERF_CTL, 'disable\n');
    if (session !== undefined && profileTo !== undefined) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(profileTo, JSON.stringify(profile));
      session.disconnect();
    }
    const first = rates[names[0]!]!;
    for (const n of names) {
      const ratio = median(rates[n]!.map((rate, r) => rate / first[r]!));
      console.log(
        `${n.padEnd(9)} ${Math.round(median(rates[n]!)).toString().padStart(7)} items/CPU-s, ` +
          `${ratio.toFixed(3)}× ${names[0]} (median per round); rounds: ${rates[n]!.map(Math.round).join(' ')}`,
      );
    }
  } finally {
    await aws.stop();
  }
}

await main();
