// Process CPU time, for suites that compare rates per CPU-second with a hand-written loop.

/** User and system CPU time of this process so far, in milliseconds. */
export function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Runs `run` and returns what it counted with the process CPU time it took. */
export async function timedCpu(run: () => Promise<number>): Promise<{ count: number; cpu: number }> {
  const start = cpuMs();
  const count = await run();
  return { count, cpu: cpuMs() - start };
}
