/** Median of a non-empty list (mean of the middle two for even lengths). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Lower and upper quartile (nearest-rank), to show spread next to the median. */
export function quartiles(values: readonly number[]): { q1: number; q3: number } {
  if (values.length === 0) throw new RangeError('quartiles of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number): number =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number;
  return { q1: at(0.25), q3: at(0.75) };
}

/** Rotates `items` left by `by` (mod length): round r runs the peers in a different order. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  if (items.length === 0) return [];
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
