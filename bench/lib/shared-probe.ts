/**
 * Does another implementation's round slow the next one? (issue 37, bench/why/throughput.md.)
 * All the named implementations in one process, warmed up together; then, for each in turn, a
 * round right after the others' rounds (as the shared method runs it) and a round right after its
 * own (as alone), alternating, and the median of the paired ratios. Not part of `npm run bench`:
 *
 *   node --expose-gc --import tsx bench/lib/shared-probe.ts materialize tidewater,powertools,middy,hand-loop 8
 */
import { register } from 'node:module';

if (process.env.TIDEWATER_BENCH_SOURCE !== 'src') register('./use-dist.mjs', import.meta.url);
const { median } = await import('./stats.js');
const { timeRound, workloadBatches } = await import('./throughput-rounds.js');
const { newCollector, PEERS, VARIANTS } = await import('../peers/index.js');
type Workload = import('../peers/index.js').Workload;

const [workload, idsText, blocksText] = process.argv.slice(2) as [Workload, string, string | undefined];
const blocks = Number(blocksText ?? 8);
const json = workloadBatches(workload, 20_260_201, 100, 50).map((b) => JSON.stringify(b));
const handlers = idsText.split(',').map((id) => {
  const peer = [...PEERS, ...VARIANTS].find((p) => p.id === id);
  if (peer === undefined) throw new Error(`shared-probe: no implementation ${id}`);
  const collector = newCollector();
  return { id, collector, handler: peer.create(collector, workload) };
});
type Entry = (typeof handlers)[number];
const run = (h: Entry) => timeRound(h.id, h.handler, h.collector, json, 5000);
for (let i = 0; i < 6; i++) for (const h of handlers) await run(h);
const after = new Map(handlers.map((h) => [h.id, { self: [] as number[], others: [] as number[] }]));
for (let b = 0; b < blocks; b++) {
  for (const h of handlers) {
    for (const o of handlers) if (o !== h) await run(o);
    const afterOthers = await run(h);
    const afterSelf = await run(h);
    after.get(h.id)?.others.push(afterOthers.cpu);
    after.get(h.id)?.self.push(afterSelf.cpu);
  }
}
for (const [id, r] of after) {
  const paired = median(r.others.map((x, i) => x / (r.self[i] as number)));
  console.log(
    `${id.padEnd(18)} after itself ${Math.round(median(r.self))}/s, after the others ${Math.round(median(r.others))}/s; paired ratio ${paired.toFixed(2)}`,
  );
}
