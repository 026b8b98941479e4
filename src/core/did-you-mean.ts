/**
 * "Did you mean …": the names nearest to one that was not found, as commander suggests for a
 * mistyped option. Bounded whatever the input: names longer than MAX_NAME are not compared, and
 * at most MAX_CANDIDATES candidates are read, so a hostile list costs O(candidates × MAX_NAME²) at
 * worst.
 */

const MAX_NAME = 128;
const MAX_CANDIDATES = 10_000;

/** Optimal string alignment distance (a transposition counts one edit, as commander's does). */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(
        (previous[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, (before[j - 2] as number) + 1);
      row.push(value);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length] as number;
}

/**
 * The candidates nearest to `name` (fewest edits, case ignored), at most three, or none when
 * nothing is within a third of the name's length (at least one edit): a guess that far off misleads.
 */
export function nearestNames(name: string, candidates: Iterable<string>): string[] {
  if (name.length > MAX_NAME) return [];
  const wanted = name.toLowerCase();
  const limit = Math.max(1, Math.floor(wanted.length / 3));
  let best = limit + 1;
  let found: string[] = [];
  let read = 0;
  for (const candidate of candidates) {
    if (++read > MAX_CANDIDATES) break;
    if (candidate.length > MAX_NAME || candidate === name) continue;
    const distance = editDistance(wanted, candidate.toLowerCase(), limit);
    if (distance > limit) continue;
    if (distance < best) {
      best = distance;
      found = [candidate];
    } else if (distance === best && !found.includes(candidate)) found.push(candidate);
  }
  return found.slice(0, 3);
}

/** ` Did you mean 'a'?` (or `'a' or 'b'`), or '' when nothing is near: appended to a "not found" message. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const near = nearestNames(name, candidates);
  return near.length === 0 ? '' : ` Did you mean ${near.map((n) => `'${n}'`).join(' or ')}?`;
}
