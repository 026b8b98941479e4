/**
 * What a progress bar shows of a run so far: the time since it started and items per second over
 * that time. cli-progress's own `{eta_formatted}` reads 0s once the total is reached (a scan's
 * total grows as it reads), so a long run looked instantaneous; these are from the wall clock.
 */
export function progressFields(
  items: number,
  startedMs: number,
  nowMs: number,
): { elapsed: string; rate: string } {
  const seconds = Math.max(0, (nowMs - startedMs) / 1000);
  return {
    elapsed: formatSeconds(seconds),
    rate: seconds < 0.001 ? '-' : String(Math.round(items / seconds)),
  };
}

/** `34 s`, `2 min 05 s`, `1 h 02 min`. */
export function formatSeconds(seconds: number): string {
  const whole = Math.floor(seconds);
  if (whole < 60) return `${whole} s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes} min ${String(whole % 60).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}
