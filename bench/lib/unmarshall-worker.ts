/**
 * Times one unmarshall variant in a process of its own (spawned by bench/suites/unmarshall.ts):
 * `unmarshall-worker.ts <variant index> <records> <rounds> <seed>`; prints one JSON line with
 * the per-round CPU nanoseconds per record. Like the suite processes, tidewater comes from dist/.
 */
import { register } from 'node:module';

if (process.env.TIDEWATER_BENCH_SOURCE !== 'src') register('./use-dist.mjs', import.meta.url);
const { generateRecords } = await import('./events.js');
const { variants } = await import('./unmarshall-variants.js');

const [index, count, rounds, seed] = process.argv.slice(2).map(Number);
const variant = variants[index as number];
if (variant === undefined || !(count! > 0) || !(rounds! > 0)) {
  throw new Error('usage: unmarshall-worker.ts <variant index> <records> <rounds> <seed>');
}
const records = generateRecords({ seed: seed as number, count: count as number });
let checksum = 0;
for (let i = 0; i < 2; i++) checksum += variant.run(records);
const nsPerRecord: number[] = [];
// No forced gc() between rounds: a full collection frees the previous round's output, and V8 then
// discards optimized code that referenced its maps (--trace-deopt: "weak objects"), so each round
// would be timed cold — tidewater's code far more than util-dynamodb's. The process is the
// variant's alone, so the collections it does pay are its own.
for (let round = 0; round < (rounds as number); round++) {
  const before = process.cpuUsage();
  checksum += variant.run(records);
  const cpu = process.cpuUsage(before);
  nsPerRecord.push(((cpu.user + cpu.system) * 1000) / (count as number));
}
process.stdout.write(`${JSON.stringify({ nsPerRecord, checksum })}\n`);
