/**
 * The functions with the most self time in a `.cpuprofile` (node --cpu-prof), as percentages of
 * the samples, grouped by function name and file (line numbers dropped, so the same function
 * compiled twice counts once); `(idle)` samples and the profiler's own (`dispatch`: stopping it
 * serializes the profile) are left out. Samples, not their time deltas: on a loaded machine a
 * thread that is preempted gets its next sample late, and the delta would charge the wait to
 * whatever it was running then (a call that wakes another thread, such as zlib's write).
 *
 *   node --import tsx bench/lib/cpuprofile-top.ts <file.cpuprofile> [how many, default 25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

function place(url: string): string {
  const at = url.search(/\/(src|dist|bench|node_modules)\//);
  return at === -1 ? url.replace(/^.*\//, '') : url.slice(at + 1);
}

function main(): void {
  const [file, count = '25'] = process.argv.slice(2);
  if (file === undefined) throw new Error('usage: cpuprofile-top.ts <file.cpuprofile> [count]');
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const names = new Map(
    profile.nodes.map((n) => [
      n.id,
      `${n.callFrame.functionName || '(anonymous)'}${n.callFrame.url ? `  ${place(n.callFrame.url)}` : ''}`,
    ]),
  );
  const self = new Map<string, number>();
  let total = 0;
  for (const id of profile.samples) {
    const name = names.get(id) ?? '?';
    if (name === '(idle)' || name === 'dispatch') continue;
    self.set(name, (self.get(name) ?? 0) + 1);
    total++;
  }
  console.log(`${total} samples (idle and the profiler's own excluded)`);
  for (const [name, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(count)))
    console.log(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${name}`);
}

main();
